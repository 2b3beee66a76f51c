#include "cuda/cuda_device.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace brook::cuda {

int cudaDeviceCount()
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no driver" error
        return 0;
    }
    return n;
}

std::string cudaDeviceDescription(int device)
{
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return {};
    char text[512];
    std::snprintf(text, sizeof text, "%s (sm_%d%d, %.1f GiB)", prop.name, prop.major, prop.minor,
                  double(prop.totalGlobalMem) / (1ull << 30));
    return text;
}

bool cudaDeviceHasBf16(int device)
{
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return false;
    return prop.major >= 8;
}

namespace {

// Whether the environment sets `name` to something other than empty or "0".
bool envSwitchOn(const char* name)
{
    const char* value = std::getenv(name);
    return value && *value && *value != '0';
}

// Hopper (sm_90) and newer, on the current device, unless the environment switches the feature off.
bool hopperFeatureEnabled(const char* offSwitch)
{
    if (envSwitchOn(offSwitch)) return false;
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    return major >= 9;
}

}  // namespace

// Each decided once per process: the backend drives one device.
bool pdlSupported()
{
    static const bool supported = hopperFeatureEnabled("BROOK_NO_PDL");
    return supported;
}

bool threadBlockClustersSupported()
{
    static const bool supported = hopperFeatureEnabled("BROOK_NO_CLUSTERS");
    return supported;
}

int pdlEarlyWait()
{
    static const int mask = [] {
        const char* value = std::getenv("BROOK_PDL_EARLY_WAIT");
        return value && *value ? int(std::strtol(value, nullptr, 0)) : 0;
    }();
    return mask;
}

int skinnyMaxRowsOverride()
{
    static const int rows = [] {
        const char* value = std::getenv("BROOK_SKINNY_MAX_ROWS");
        const long n = value && *value ? std::strtol(value, nullptr, 10) : 0;
        return n >= 1 && n <= 8 ? int(n) : 0;
    }();
    return rows;
}

}  // namespace brook::cuda
