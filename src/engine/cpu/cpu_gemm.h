// matmul: out[T, N] = x[T, K] @ W[N, K]^T for a CpuMatrix in any format, on the vector path
// `isa` (activeCpuIsa() in the backend), split over the output rows across the backend's
// persistent CpuThreadPool (a step creates no threads).
//
// Which kernel runs (measured choices, docs/benchmarks.md "CPU backend"):
//   F32             -> OpenBLAS (sgemv for T = 1, sgemm otherwise), as cpu_ops' linear().
//   BF16, T < 16 or isa below Avx512Bf16
//                   -> widen bf16 -> fp32 in registers, fp32 FMAs: exactly the fp32 reference's
//                      products (bf16 -> fp32 is exact), only the summation order differs. All
//                      T rows are computed from one read of each weight block, so a batch of 8
//                      decodes streams the weights once per step, not 8 times.
//   BF16, T >= 16 on Avx512Bf16
//                   -> activations rounded to bf16, vdpbf16ps (twice the FMA rate; prefill is
//                      compute-bound). Each product loses at most 2^-9 relative (the rounding of x).
//   Q8              -> activations quantized to int8 per block of 32 inputs (a scale each), int32
//                      dot products (vpdpbusd on AVX-512 VNNI, vpmaddubsw on AVX2, plain C++ on
//                      scalar), scaled to fp32 per block and group; every path computes the same
//                      output bit for bit (cpu_gemm_q8.h).
// Vector kernels need even K (every ERNIE Linear has it); odd K runs the scalar kernel.
#pragma once

#include "engine/cpu/cpu_features.h"
#include "engine/cpu/cpu_matrix.h"
#include "engine/cpu/cpu_thread_pool.h"

namespace brook::cpu {

// Token counts at or above this take the vdpbf16ps kernel (when the path has it). From 4 rows
// on (a decode batch of 4+) widening bf16 to fp32 costs as much time as streaming the weights,
// and vdpbf16ps does a pair of inputs in one instruction; llama.cpp rounds every activation to
// bf16 for bf16 weights, so the accuracy is the same as theirs (test_cpu_gemm's bound).
constexpr int kBf16DotMinTokens = 4;

// Thread-safe for distinct `out` and distinct pools; uses the calling thread's scratch for bf16
// activations. pool: where the row blocks run (null: all on the calling thread).
void matmul(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool = nullptr);

}  // namespace brook::cpu
