// The per-ISA bf16 kernels behind matmul (cpu_gemm.h); internal to src/engine/cpu. (int8: cpu_gemm_q8.h.)
// Each computes out[t, n] for t in [0, T) and the rows of blocks [b0, b1) of w (16 rows a block),
// out row stride N = w.rows(). x: [T, K] fp32.
// xPairs (vdpbf16ps): [T, P] x rounded to bf16, two per uint32 (input 2p in the low half).
// Safe to call concurrently on disjoint block ranges.
#pragma once

#include "engine/cpu/cpu_matrix.h"

#include <cstdint>

namespace brook::cpu::kernels {

void bf16Scalar(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1);
void bf16Avx2(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1);
void bf16Avx512(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1);
// The bf16-activation reference of bf16DotAvx512: the same products, in fp32, in pair order.
void bf16DotScalar(const CpuMatrix& w, const uint32_t* xPairs, int T, float* out, int b0, int b1);
void bf16DotAvx512(const CpuMatrix& w, const uint32_t* xPairs, int T, float* out, int b0, int b1);

// An F32 matrix (row-major), the rows of blocks [b0, b1) (cpu_gemm_f32.cpp).
void f32Scalar(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1);
void f32Avx2(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1);
void f32Avx512(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1);

}  // namespace brook::cpu::kernels

namespace brook::cpu::kernels {

// x[T, K] -> xPairs[T, P] (P = (K + 1) / 2), rounded to nearest even bf16, odd K padded with 0.
void toBf16PairsScalar(const float* x, int T, int K, uint32_t* xPairs);
void toBf16PairsAvx512Bf16(const float* x, int T, int K, uint32_t* xPairs);

}  // namespace brook::cpu::kernels
