// The element types the CUDA backend computes in, and conversions usable on host and device.
// Activations and weights are bf16 or fp16; accumulation is always fp32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace brook::cuda {

enum class ElementType { BF16, F16 };

inline const char* elementTypeName(ElementType t) { return t == ElementType::BF16 ? "bfloat16" : "float16"; }

__host__ __device__ inline float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__host__ __device__ inline float toFloat(__half v) { return __half2float(v); }
__host__ __device__ inline float toFloat(float v) { return v; }

template <typename T>
__host__ __device__ inline T fromFloat(float v);
template <>
__host__ __device__ inline __nv_bfloat16 fromFloat<__nv_bfloat16>(float v)
{
    return __float2bfloat16(v);
}
template <>
__host__ __device__ inline __half fromFloat<__half>(float v)
{
    return __float2half(v);
}
template <>
__host__ __device__ inline float fromFloat<float>(float v)
{
    return v;
}

// Calls f.template operator()<T>() with T = __nv_bfloat16 or __half.
#define BROOK_DISPATCH_ELEMENT_TYPE(type, T, ...)                                                                      \
    do {                                                                                                               \
        if ((type) == ::brook::cuda::ElementType::BF16) {                                                              \
            using T = __nv_bfloat16;                                                                                   \
            __VA_ARGS__                                                                                                \
        } else {                                                                                                       \
            using T = __half;                                                                                          \
            __VA_ARGS__                                                                                                \
        }                                                                                                              \
    } while (0)

}  // namespace brook::cuda
