// The int8 matmul of a Q8 CpuMatrix (internal to src/engine/cpu; matmul in cpu_gemm.h calls it).
//
// Why quantize the activations: widening int8 codes to fp32 costs five instructions per 16
// weights, and decode then ran slower than bf16 (28 against 50 tok/s). With the activations in
// int8 too, one vpdpbusd multiplies 64 weight bytes (16 rows x 4 inputs) with 4 activation bytes
// broadcast to every lane and adds into 16 int32 sums: one instruction per 64 bytes streamed, as
// llama.cpp's q8_0 x q8_0 dot does.
//
// The arithmetic, identical on every path (integer sums are exact and the fp32 steps below run in
// the same order with fused multiply-adds everywhere, so each path's output equals the scalar
// reference bit for bit; tests/engine/test_cpu_gemm.cpp checks that):
//   activations, per token and block b of kQ8Block = 32 inputs:
//     d_b = max|x| / 127,  a_k = round-half-even(x_k * (1 / d_b)) in [-127, 127]  (0 when d_b = 0)
//     A_b = sum of the block's a_k,  X_g = sum over the blocks b of group g, in order, of d_b * A_b
//   weights: w = (q - z) s per row and group g (QuantizedWeight), stored as s and o = -s z;
//   out = sum_g fma(o_g, X_g, fma(inner_g, s_g, .)),  inner_g = sum_b fma(float(D_b), d_b, .),
//     D_b = sum over the block of q_k a_k (int32: at most 32 * 255 * 127 < 2^24, exact in fp32).
// Error against the fp32 product: each x_k moves by at most d_b / 2 (plus rounding of x * (1/d)),
// so |out - sum_k w_k x_k| <= sum_k |w_k| (d_b / 2 + 2^-22 |x_k|) + fp32 summation error; about
// 0.4% of the row's sum of |w_k x_k| for Gaussian activations, the order of the int8 weights' own
// rounding.
#pragma once

#include "engine/cpu/cpu_matrix.h"

#include <cstdint>

namespace brook::cpu::kernels {

struct Q8Activations {
    int T = 0, K = 0, G = 0;             // tokens, inputs, weight groups per row
    const int8_t* codes = nullptr;       // [T][K] a_k
    const float* scales = nullptr;       // [T][K / 32] d_b
    const int32_t* blockSums = nullptr;  // [T][K / 32] A_b
    const float* groupSums = nullptr;    // [T][G] X_g
};

// Quantizes `blocks` consecutive blocks of 32 floats (x: blocks * 32 values): codes, d_b, A_b.
// All three compute the same bytes and floats.
void quantizeQ8Scalar(const float* x, int64_t blocks, int8_t* codes, float* scales, int32_t* sums);
void quantizeQ8Avx2(const float* x, int64_t blocks, int8_t* codes, float* scales, int32_t* sums);
void quantizeQ8Avx512(const float* x, int64_t blocks, int8_t* codes, float* scales, int32_t* sums);

// out[t, n] for all T tokens and the rows of blocks [b0, b1); out row stride w.rows().
void q8Scalar(const CpuMatrix& w, const Q8Activations& a, float* out, int b0, int b1);
// AVX2 (and AVX-512 without VNNI): vpmaddubsw on |q - 128| and a * sign(q - 128), which cannot
// saturate (128 * 127 * 2 < 2^15), then + 128 A_b.
void q8Avx2(const CpuMatrix& w, const Q8Activations& a, float* out, int b0, int b1);
// AVX-512 VNNI: vpdpbusd on the codes (unsigned) and the activations (signed) directly.
void q8Avx512Vnni(const CpuMatrix& w, const Q8Activations& a, float* out, int b0, int b1);

}  // namespace brook::cpu::kernels
