// Skinny GEMM for decode: out[M, N] (+)= x[M, K] @ w[N, K]^T for M <= kSkinnyMaxRows.
// At batch 1-8 a decode step is a weight stream: each ERNIE matrix is only 4-13 MB, so the
// kernel must reach full bandwidth within microseconds. One warp owns two output columns and
// streams their weight rows with 16-byte loads (all in flight at once), multiplying by every
// row of x held in shared memory; fp32 accumulation, warp-shuffle reduction.
// Reference: cpu::linear. Test: tests/cuda/test_gemm.cpp.
#pragma once

#include "cuda/cuda_dtype.h"

#include <cuda_runtime.h>

namespace brook::cuda {

inline constexpr int kSkinnyMaxRows = 8;

// True when the shape suits the skinny kernel (M <= 8, K % 8 == 0, x fits in shared memory).
bool skinny_gemm_supported(int M, int K);

// outFloat: out is fp32 (else the element type); accumulate: out += result (else out = result).
void launch_skinny_gemm(const void* x, const void* w, void* out, int M, int N, int K, ElementType type,
                        bool outFloat, bool accumulate, cudaStream_t stream);

} // namespace brook::cuda
