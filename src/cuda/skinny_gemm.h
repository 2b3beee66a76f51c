// Skinny GEMM for decode: out[M, N] (+)= f(x)[M, K] @ w[N, K]^T for M <= kSkinnyMaxRows.
// At batch 1-8 a decode step is a weight stream: each ERNIE matrix is only 4-13 MB, so the
// kernel must reach full bandwidth within microseconds. One warp owns one or two output columns (two when N is wide) and
// streams their weight rows with 16-byte loads, four per column in flight and the next four
// prefetched while the current ones are multiplied (the loop is latency-bound otherwise); the
// rows of f(x) sit in shared memory; fp32 accumulation, warp-shuffle reduction.
// f, the prologue, fuses the small kernel that would otherwise run before the GEMM:
//   None:     f(x) = x                                  (x: [M, K] element type)
//   RmsNorm:  f(x) = rmsnorm(x) * normWeight            (x: [M, K] fp32 residual rows)
//   SiluMul:  f(x) = silu(x[:, :K]) * x[:, K:]          (x: [M, 2K] element type, gate | up)
// each rounded to the element type exactly as the standalone kernels round.
// Epilogue for the qkv projection (rope != nullptr): instead of writing out, interleaved RoPE
// on the q and k columns and the KV-cache write, exactly as launch_rope_cache_write does after
// a plain GEMM (the GEMM result is rounded to the element type first), one kernel fewer.
// Launched as a programmatic dependent (pdl.cuh): the weight loads start before the previous
// kernel has finished.
// Reference: cpu::linear (+ cpu::rmsnorm / cpu::siluMul / cpu::ropeInterleaved). Test:
// tests/cuda/test_gemm.cpp.
#pragma once

#include "cuda/cuda_dtype.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace brook::cuda {

inline constexpr int kSkinnyMaxRows = 8;
// The crossover to cuBLASLt's tensor cores: brook-step-bench on an H200 (docs/benchmarks.md),
// decode forward at 4 tokens 769 us skinny / 808 cuBLASLt, at 5-8 tokens 1,307-1,325 / 766-780.
inline constexpr int kSkinnyPreferredMaxRows = 4;

enum class SkinnyPrologue { None, RmsNorm, SiluMul };

// Where the RoPE epilogue writes (see launch_rope_cache_write in layer_kernels.h for the layouts).
struct SkinnyRope {
    void* q = nullptr;       // [M, NH*HD] rotated q
    void* kCache = nullptr;  // [blocks, blockSize, KVH, HD]
    void* vCache = nullptr;
    const int32_t* positions = nullptr;    // [M]
    const int32_t* slotMapping = nullptr;  // [M]; negative: padding row, no cache write
    const float* invFreq = nullptr;        // [HD/2]
    int numHeads = 0, numKvHeads = 0, headDim = 0;
};

// True when the shape suits the skinny kernel (M <= 8, K % 8 == 0, f(x) fits in shared memory).
bool skinny_gemm_supported(int M, int K);
// True when a decode step of M tokens should take the skinny path (fused prologues, PDL) rather
// than cuBLASLt: supported and M <= kSkinnyPreferredMaxRows (CudaFeatures::skinnyMaxRows overrides).
bool skinny_gemm_preferred(int M, int K);

// outFloat: out is fp32 (else the element type); accumulate: out += result (else out = result).
// normWeight and eps are used by the RmsNorm prologue only.
void launch_skinny_gemm(const void* x, const void* w, void* out, int M, int N, int K, ElementType type, bool outFloat,
                        bool accumulate, cudaStream_t stream, SkinnyPrologue prologue = SkinnyPrologue::None,
                        const void* normWeight = nullptr, float eps = 0.0f, const SkinnyRope* rope = nullptr);

}  // namespace brook::cuda
