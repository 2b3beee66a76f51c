#include "cuda/cuda_device.h"

#include "cuda/cuda_check.h"
#include "cuda/cuda_features.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>

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

int multiprocessorCount()
{
    static std::array<std::atomic<int>, 64> cache{};
    int device = 0;
    BROOK_CUDA_CHECK(cudaGetDevice(&device));
    const bool cached = device >= 0 && device < int(cache.size());
    if (cached && cache[size_t(device)].load() > 0) return cache[size_t(device)].load();
    int count = 0;
    BROOK_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    count = std::max(count, 1);
    if (cached) cache[size_t(device)].store(count);
    return count;
}

namespace {

constexpr unsigned pack(const CudaFeatures& f)
{
    return (f.programmaticDependentLaunch ? 1u : 0u) | (f.threadBlockClusters ? 2u : 0u) | (f.padGemmRows ? 4u : 0u) |
           (f.splitKvPrefill ? 8u : 0u) | (f.prefillGraphs ? 16u : 0u) | (f.pdlPrefillKernels ? 32u : 0u) |
           (f.fusedGemm ? 64u : 0u) | (unsigned(f.pdlEarlyWaitMask & 0xFF) << 8) |
           (unsigned(f.skinnyMaxRows & 0xFF) << 16) | (unsigned(f.samplerClusterSize & 0xF) << 24);
}

CudaFeatures unpack(unsigned bits)
{
    CudaFeatures f;
    f.programmaticDependentLaunch = bits & 1u;
    f.threadBlockClusters = bits & 2u;
    f.padGemmRows = bits & 4u;
    f.splitKvPrefill = bits & 8u;
    f.prefillGraphs = bits & 16u;
    f.pdlPrefillKernels = bits & 32u;
    f.fusedGemm = bits & 64u;
    f.pdlEarlyWaitMask = int((bits >> 8) & 0xFF);
    f.skinnyMaxRows = int((bits >> 16) & 0xFF);
    f.samplerClusterSize = int((bits >> 24) & 0xF);
    return f;
}

// Hopper (sm_90) and newer, on the current device; decided once per process (the backend drives
// one device).
bool hopperDevice()
{
    static const bool hopper = [] {
        int device = 0, major = 0;
        if (cudaGetDevice(&device) != cudaSuccess) return false;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
        return major >= 9;
    }();
    return hopper;
}

// The active CudaFeatures, packed so that launches on any thread read them without a lock: bits
// 0-6 the switches, bits 8-15 the early-wait mask, bits 16-23 skinnyMaxRows, bits 24-27
// samplerClusterSize. Every field must be
// packed: one that is not reads as its default whatever was set (splitKvPrefill did, so
// --no-split-kv-prefill changed nothing until 2026-12-03).
std::atomic<unsigned> activeFeatures{pack(CudaFeatures{})};

}  // namespace

void setCudaFeatures(const CudaFeatures& features) { activeFeatures.store(pack(features)); }

CudaFeatures cudaFeatures() { return unpack(activeFeatures.load()); }

bool pdlSupported() { return hopperDevice() && cudaFeatures().programmaticDependentLaunch; }

bool pdlPrefillKernels() { return pdlSupported() && cudaFeatures().pdlPrefillKernels; }

bool threadBlockClustersSupported() { return hopperDevice() && cudaFeatures().threadBlockClusters; }

int pdlEarlyWait() { return cudaFeatures().pdlEarlyWaitMask; }

int samplerClusterOverride()
{
    const int n = cudaFeatures().samplerClusterSize;
    return n >= 1 && n <= 8 ? n : 0;
}

int skinnyMaxRowsOverride()
{
    const int n = cudaFeatures().skinnyMaxRows;
    return n >= 1 && n <= 8 ? n : 0;
}

}  // namespace brook::cuda
