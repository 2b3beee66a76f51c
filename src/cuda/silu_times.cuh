// SwiGLU's element: silu(gate) * up in fp32 from element-type inputs, rounded once to the
// element type. One definition for every kernel that computes it (silu_mul.cu, fused_gemm.cu), so
// that the fused and the standalone paths round alike. Reference: cpu::siluMul.
#pragma once

#include "cuda/cuda_dtype.h"

namespace brook::cuda {

template <typename T>
__device__ inline T siluTimes(T gate, T up)
{
    const float g = toFloat(gate);
    return fromFloat<T>(g / (1.0f + __expf(-g)) * toFloat(up));
}

}  // namespace brook::cuda
