// AVX2 + FMA kernels: the floor of the vector paths (any x86-64 CPU since 2013-2015). Same
// layouts as the AVX-512 ones; a 16-row block is two 8-lane halves.
#include "engine/cpu/cpu_gemm_kernels.h"

#include <immintrin.h>

#include <algorithm>

#define BROOK_AVX2 __attribute__((target("avx2,fma")))

namespace brook::cpu::kernels {

namespace {

constexpr int kB = CpuMatrix::kBlockRows;
constexpr int kPrefetchPairs = 32;  // 32 x 64 bytes, as the AVX-512 widening kernel
// Tokens a pass of the chained kernel (10 accumulators: see bf16BlockChained).
constexpr int kChainedTokens = 5;

BROOK_AVX2 inline void storeHalf(float* dst, __m256 v, int lanes)
{
    if (lanes >= 8) {
        _mm256_storeu_ps(dst, v);
        return;
    }
    alignas(32) float tmp[8];
    _mm256_store_ps(tmp, v);
    for (int i = 0; i < lanes; ++i) dst[i] = tmp[i];
}

BROOK_AVX2 inline void storeRows(float* dst, __m256 lo, __m256 hi, int lanes)
{
    storeHalf(dst, lo, lanes);
    if (lanes > 8) storeHalf(dst + 8, hi, lanes - 8);
}

// TT tokens of one block for a prompt or a decode batch, the even and odd input of a pair chained
// on one accumulator per half and token (as the AVX-512 bf16TwoBlocks). At TT = 5 the 10
// accumulators, the block's 4 widened vectors and a token's 2 broadcasts fill the 16 registers
// (the mask is reloaded), and 10 chains of two dependent FMAs keep both FMA ports busy. The
// loops are unrolled so that the accumulators live in registers only: rolled, GCC kept the array
// in memory and stored every accumulator on every pair. A kernel with 4 x TT accumulators (even
// and odd apart) ran a 128-token prompt at ~70 GFLOP/s on two Zen 4 cores; this one at 155-185,
// near the AVX-512F kernel's 175-200 on the same FMA units (cpu_kernel_bench --isa avx2). One
// decode has 2 chains of 2 dependent FMAs per 64-byte line: ~8 bytes a cycle, above what one
// core streams from memory.
template <int TT>
BROOK_AVX2 void bf16BlockChained(const uint16_t* wb, int P, const float* x, int K, float* out, int N, int lanes)
{
    __m256 acc[2][TT];  // [half][token]
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t) acc[0][t] = acc[1][t] = _mm256_setzero_ps();
    const __m256i hiMask = _mm256_set1_epi32(int(0xFFFF0000u));
    for (int p = 0; p < P; ++p) {
        // One 64-byte line a pair: a decode batch streams the block from memory, 2 KB ahead.
        _mm_prefetch(reinterpret_cast<const char*>(wb + size_t(p + kPrefetchPairs) * 32), _MM_HINT_T0);
        const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + size_t(p) * 32));
        const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + size_t(p) * 32 + 16));
        const __m256 e0 = _mm256_castsi256_ps(_mm256_slli_epi32(w0, 16)),
                     o0 = _mm256_castsi256_ps(_mm256_and_si256(w0, hiMask));
        const __m256 e1 = _mm256_castsi256_ps(_mm256_slli_epi32(w1, 16)),
                     o1 = _mm256_castsi256_ps(_mm256_and_si256(w1, hiMask));
#pragma GCC unroll 8
        for (int t = 0; t < TT; ++t) {
            const float* xt = x + int64_t(t) * K + 2 * p;
            const __m256 x0 = _mm256_broadcast_ss(xt), x1 = _mm256_broadcast_ss(xt + 1);
            acc[0][t] = _mm256_fmadd_ps(o0, x1, _mm256_fmadd_ps(e0, x0, acc[0][t]));
            acc[1][t] = _mm256_fmadd_ps(o1, x1, _mm256_fmadd_ps(e1, x0, acc[1][t]));
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t) storeRows(out + int64_t(t) * N, acc[0][t], acc[1][t], lanes);
}

}  // namespace

BROOK_AVX2 void bf16Avx2(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1)
{
    // One kernel for every T: each output's sum runs in the same order whatever else is in the
    // step (batch invariance, docs/server.md "Determinism"). The decode-only kernels this
    // replaced (even and odd inputs apart, 4 x T chains) summed in another order.
    const int K = w.cols(), N = w.rows();
    for (int b = b0; b < b1; ++b) {
        const uint16_t* wb = w.bf16Block(b);
        const int lanes = std::min(kB, N - b * kB);
        for (int t = 0; t < T; t += kChainedTokens) {
            const float* xt = x + int64_t(t) * K;
            float* ot = out + int64_t(t) * N + b * kB;
            switch (std::min(kChainedTokens, T - t)) {
            case 1: bf16BlockChained<1>(wb, w.pairs(), xt, K, ot, N, lanes); break;
            case 2: bf16BlockChained<2>(wb, w.pairs(), xt, K, ot, N, lanes); break;
            case 3: bf16BlockChained<3>(wb, w.pairs(), xt, K, ot, N, lanes); break;
            case 4: bf16BlockChained<4>(wb, w.pairs(), xt, K, ot, N, lanes); break;
            default: bf16BlockChained<kChainedTokens>(wb, w.pairs(), xt, K, ot, N, lanes); break;
            }
        }
    }
}

}  // namespace brook::cpu::kernels
