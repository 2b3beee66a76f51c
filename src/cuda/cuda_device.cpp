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

bool pdlSupported()
{
    // Per process: the backend drives one device. BROOK_NO_PDL=1 turns it off (A/B measurements).
    static const bool supported = [] {
        const char* off = std::getenv("BROOK_NO_PDL");
        if (off && *off && *off != '0') return false;
        int device = 0, major = 0;
        if (cudaGetDevice(&device) != cudaSuccess) return false;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
        return major >= 9;
    }();
    return supported;
}

bool threadBlockClustersSupported()
{
    // Per process, as pdlSupported(). BROOK_NO_CLUSTERS=1 turns them off (A/B measurements).
    static const bool supported = [] {
        const char* off = std::getenv("BROOK_NO_CLUSTERS");
        if (off && *off && *off != '0') return false;
        int device = 0, major = 0;
        if (cudaGetDevice(&device) != cudaSuccess) return false;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
        return major >= 9;
    }();
    return supported;
}

int pdlEarlyWait()
{
    static const int mask = [] {
        const char* on = std::getenv("BROOK_PDL_EARLY_WAIT");
        return on && *on ? int(std::strtol(on, nullptr, 0)) : 0;
    }();
    return mask;
}

} // namespace brook::cuda
