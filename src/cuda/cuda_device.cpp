#include "cuda/cuda_device.h"

#include <cuda_runtime.h>

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

} // namespace brook::cuda
