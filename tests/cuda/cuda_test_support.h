// Shared by CUDA kernel tests: skip without a GPU, random inputs, host<->device copies and
// bf16/fp16 rounding on the host so references see exactly what the kernel sees.
#pragma once

#include "cuda/cuda_check.h"
#include "cuda/cuda_dtype.h"
#include "cuda/cuda_features.h"
#include "cuda/device_buffer.h"

#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

namespace brook::cudatest {

inline bool haveGpu()
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define BROOK_REQUIRE_GPU()                                                                                            \
    do {                                                                                                               \
        if (!::brook::cudatest::haveGpu()) QSKIP("no CUDA GPU present");                                               \
    } while (0)

// Installs a kernel feature set (process-wide, cuda_features.h) for one test and the defaults
// again after it.
struct FeaturesScope {
    explicit FeaturesScope(const cuda::CudaFeatures& features) { cuda::setCudaFeatures(features); }
    ~FeaturesScope() { cuda::setCudaFeatures({}); }
    FeaturesScope(const FeaturesScope&) = delete;
    FeaturesScope& operator=(const FeaturesScope&) = delete;
};

inline std::vector<float> randomFloats(size_t n, uint64_t seed, float scale = 1.0f)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

// Rounds values to what the element type can hold (so CPU references use the same inputs).
template <typename T>
std::vector<T> toDevice(const std::vector<float>& values)
{
    std::vector<T> out(values.size());
    for (size_t i = 0; i < values.size(); ++i) out[i] = cuda::fromFloat<T>(values[i]);
    return out;
}

template <typename T>
std::vector<float> toHostFloat(const std::vector<T>& values)
{
    std::vector<float> out(values.size());
    for (size_t i = 0; i < values.size(); ++i) out[i] = cuda::toFloat(values[i]);
    return out;
}

template <typename T>
cuda::DeviceBuffer upload(const std::vector<T>& host)
{
    cuda::DeviceBuffer buffer(host.size() * sizeof(T));
    BROOK_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return buffer;
}

template <typename T>
std::vector<T> download(const cuda::DeviceBuffer& buffer, size_t count)
{
    std::vector<T> host(count);
    BROOK_CUDA_CHECK(cudaDeviceSynchronize());
    BROOK_CUDA_CHECK(cudaMemcpy(host.data(), buffer.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

// max |a - b| / max(|b|, floor): the tolerance measure every kernel test states.
inline double relativeError(const std::vector<float>& got, const std::vector<float>& want, double floor = 1e-6)
{
    double diff = 0, scale = floor;
    for (size_t i = 0; i < want.size(); ++i) {
        diff = std::max(diff, double(std::abs(got[i] - want[i])));
        scale = std::max(scale, double(std::abs(want[i])));
    }
    return diff / scale;
}

}  // namespace brook::cudatest
