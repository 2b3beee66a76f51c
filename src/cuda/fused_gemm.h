// Fused GEMM for short steps: epilogue(x[M, K] @ w[N, K]^T) for up to kFusedGemmMaxRows rows, on
// tensor cores, with the layer's element-wise kernel folded into the epilogue. The backend uses it
// for dense steps of 5 to kFusedGemmPreferredMaxRows tokens (decode batches, short prefill chunks).
// Why not cuBLASLt here: a prefix-cache hit leaves a chunk of tens of tokens, and a step of that
// size is a chain of ~5 us kernels. Through cuBLASLt a layer is 10 of them (its split-K
// reduction, RoPE + cache write and SiLU*up are kernels of their own), and cuBLASLt's kernels
// cannot start before their predecessor has drained. Here a layer is 7: the reduction and the
// element-wise work run in the GEMMs' epilogues, and every GEMM is a programmatic dependent
// (pdl.cuh) that requests its first weight tiles before waiting for the previous kernel.
//
// Shape of the work: 64-column tiles, K split over the CTAs of a thread-block cluster (sm_90;
// up to 8) so that even N = 1,024 covers the GPU's SMs, and the split partial sums are added in
// rank order through distributed shared memory: deterministic, no workspace, no second kernel.
// Epilogues (each value rounded where the unfused kernels round it):
//   Store:      out[M, N] (element type) = result
//   AddToFloat: out[M, N] (fp32) += result                          (o_proj, down_proj: residual)
//   SiluMul:    w = [gate | up], N = 2I: out[M, I] = silu(gate) * up, gate and up rounded to the
//               element type first, as launch_silu_mul reads them from a GEMM's output
//   RopeCache:  the qkv projection: RoPE + KV-cache write as SkinnyRope describes; out unused
// Rows past M are neither read nor written. Reference: cpu::linear (+ cpu::siluMul,
// cpu::ropeInterleaved). Test: tests/cuda/test_fused_gemm.cpp.
#pragma once

#include "cuda/cuda_dtype.h"
#include "cuda/skinny_gemm.h"  // SkinnyRope

#include <cuda_runtime.h>

namespace brook::cuda {

inline constexpr int kFusedGemmMaxRows = 256;
// Where the backend stops using it: brook-step-bench on an H200, forward us fused / cuBLASLt
// (docs/benchmarks.md, 2026-12-04): decode at context 256, 8 rows 679 / 753, 16: 732 / 781,
// 32: 804 / 828, 40 and 48 (a 48-row graph): 953-984 / 919-937; a prefill over 1,717 cached
// tokens, 17 tokens 910 / 990, 32: 934 / 1,028, 48: 1,111 / 1,142, 83 (a 128-row graph) 1,496 /
// 1,190 in an earlier build. Past 32 rows cuBLASLt's kernels multiply faster than this kernel
// saves in launches and fusions.
inline constexpr int kFusedGemmPreferredMaxRows = 32;

enum class FusedEpilogue { Store, AddToFloat, SiluMul, RopeCache };

// Shapes the kernel takes: 1 <= M <= kFusedGemmMaxRows, N and K multiples of 64 (SiluMul: each
// tile holds 32 gate columns and the 32 up columns that match them).
bool fused_gemm_supported(int M, int N, int K);
// Whether a step of M rows should take it: M <= kFusedGemmPreferredMaxRows, supported, sm_80 or
// newer (cp.async, bf16 MMA), and CudaFeatures::fusedGemm on.
bool fused_gemm_preferred(int M, int N, int K);

// Throws CudaError for an unsupported shape. rope: RopeCache only (its q, caches and step inputs).
void launch_fused_gemm(const void* x, const void* w, void* out, int M, int N, int K, ElementType type,
                       FusedEpilogue epilogue, cudaStream_t stream, const SkinnyRope* rope = nullptr);

}  // namespace brook::cuda
