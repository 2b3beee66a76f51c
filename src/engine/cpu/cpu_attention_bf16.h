// Attention's block kernels in bf16 pairs, for prompts on CPUs with AVX-512 BF16 (vdpbf16ps).
// Only CpuIsa::Avx512Bf16 may call these (cpu_attention.cpp does so for PromptAttention::Bf16).
//
// A "pair" is two bf16 values in one 32-bit word, the lower-indexed one in the low half: the
// operand vdpbf16ps multiplies and adds in fp32 (acc += a.lo * b.lo + a.hi * b.hi). Every
// conversion rounds to nearest even. So the two products of attention pair up along the
// dimension they sum over:
//  - scores sum over the head dimension d: a K tile becomes [n / 2][blockSize] pairs (keys d and
//    d + 1 of one slot in a word), a query row n / 2 pairs;
//  - the weighted sum of V sums over the keys: V becomes [blockSize / 2][n] pairs (slots 2r and
//    2r + 1 of one dimension in a word), the probabilities blockSize / 2 pairs a block.
// Query rows and probabilities are plain rows of pairs: the prompt GEMM's activation conversion
// (kernels::toBf16PairsAvx512Bf16, cpu_gemm_kernels.h) makes them.
// Converting a sequence's K and V once a layer is shared by all its queries and heads, and each
// vdpbf16ps then does twice the multiply-adds of an fp32 fma (tests: test_cpu_attention_bf16).
#pragma once

#include <cstdint>

namespace brook::cpu::attention_bf16 {

// out[p * blockSize + j] = pair(kt[2p * blockSize + j], kt[(2p + 1) * blockSize + j]) for p < n / 2
// and j < blockSize: a K tile ([n][blockSize], PagedKv's Tiles layout) in pairs along d. Slots
// j >= count were never written and become 0. n is even.
void keyTilePairs(const float* kt, int blockSize, int count, int n, uint32_t* out);

// out[r * n + i] = pair(rows[2r * stride + i], rows[(2r + 1) * stride + i]) for r < blockSize / 2
// and i < n: a block's V rows (stride floats apart) in pairs along the slots. Slots >= count were
// never written and become 0, so a zero probability never meets a NaN. blockSize and n are even,
// n a multiple of 16.
void valueRowPairs(const float* rows, int64_t stride, int blockSize, int count, int n, uint32_t* out);

// out[h * outStride + j] = scale * sum_p dot2(qp[h * qpStride + p], kp[p * blockSize + j]) for
// h < heads and j < count (nothing else written): `heads` query heads against one K pair tile.
void scoresPairs(const uint32_t* qp, int heads, int64_t qpStride, const uint32_t* kp, int blockSize, int count,
                 int pairs, float scale, float* out, int64_t outStride);

// y[h * yStride + i] += sum_r dot2(wp[h * wpStride + r], vp[r * n + i]) for h < heads, r <
// pairRows, i < n (a multiple of 16): `heads` outputs that read the same V pairs (one GQA group).
void weightedPairs(float* y, int heads, int64_t yStride, const uint32_t* wp, int64_t wpStride, const uint32_t* vp,
                   int pairRows, int n);

}  // namespace brook::cpu::attention_bf16
