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
// Tokens a pass of the chained kernel, and the batch from which it replaces bf16Block.
constexpr int kChainedTokens = 5;
constexpr int kChainedMinTokens = 4;

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

template <int TT>
BROOK_AVX2 void bf16Block(const uint16_t* wb, int P, const float* x, int K, float* out, int N, int lanes)
{
    __m256 acc[2][2][TT];  // [half][even/odd][token]
#pragma GCC unroll 8
    for (int h = 0; h < 2; ++h)
#pragma GCC unroll 8
        for (int t = 0; t < TT; ++t) acc[h][0][t] = acc[h][1][t] = _mm256_setzero_ps();
    const __m256i hiMask = _mm256_set1_epi32(int(0xFFFF0000u));
    for (int p = 0; p < P; ++p) {
        _mm_prefetch(reinterpret_cast<const char*>(wb + size_t(p + kPrefetchPairs) * 32), _MM_HINT_T0);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + size_t(p) * 32 + h * 16));
            const __m256 we = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
            const __m256 wo = _mm256_castsi256_ps(_mm256_and_si256(w, hiMask));
#pragma GCC unroll 8
            for (int t = 0; t < TT; ++t) {
                const float* xt = x + int64_t(t) * K + 2 * p;
                acc[h][0][t] = _mm256_fmadd_ps(we, _mm256_broadcast_ss(xt), acc[h][0][t]);
                acc[h][1][t] = _mm256_fmadd_ps(wo, _mm256_broadcast_ss(xt + 1), acc[h][1][t]);
            }
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < TT; ++t)
        storeRows(out + int64_t(t) * N, _mm256_add_ps(acc[0][0][t], acc[0][1][t]),
                  _mm256_add_ps(acc[1][0][t], acc[1][1][t]), lanes);
}

// One decode: two pairs a pass with their own accumulators (8 independent FMA chains instead of
// 4), and the block prefetched 2 KB ahead. A batch-1 step's 72 Linears over weights from memory
// (cpu_kernel_bench --cold-layers 18 --tokens 1 --isa avx2, Zen 4, four rounds alternating):
// 22.4-26.2 ms with bf16Block<1> and no prefetch, 20.8-22.3 with the prefetch, 19.3-19.6 as here.
BROOK_AVX2 void bf16BlockOneToken(const uint16_t* wb, int P, const float* x, float* out, int lanes)
{
    __m256 acc[2][2][2];  // [u][half][even/odd]
#pragma GCC unroll 8
    for (int u = 0; u < 2; ++u)
        for (int h = 0; h < 2; ++h) acc[u][h][0] = acc[u][h][1] = _mm256_setzero_ps();
    const __m256i hiMask = _mm256_set1_epi32(int(0xFFFF0000u));
    int p = 0;
    for (; p + 2 <= P; p += 2) {
        _mm_prefetch(reinterpret_cast<const char*>(wb + size_t(p + kPrefetchPairs) * 32), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(wb + size_t(p + 1 + kPrefetchPairs) * 32), _MM_HINT_T0);
#pragma GCC unroll 8
        for (int u = 0; u < 2; ++u) {
            const __m256 x0 = _mm256_broadcast_ss(x + 2 * (p + u)), x1 = _mm256_broadcast_ss(x + 2 * (p + u) + 1);
#pragma GCC unroll 8
            for (int h = 0; h < 2; ++h) {
                const __m256i w =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + size_t(p + u) * 32 + h * 16));
                acc[u][h][0] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(w, 16)), x0, acc[u][h][0]);
                acc[u][h][1] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_and_si256(w, hiMask)), x1, acc[u][h][1]);
            }
        }
    }
    for (; p < P; ++p) {
        const __m256 x0 = _mm256_broadcast_ss(x + 2 * p), x1 = _mm256_broadcast_ss(x + 2 * p + 1);
#pragma GCC unroll 8
        for (int h = 0; h < 2; ++h) {
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + size_t(p) * 32 + h * 16));
            acc[0][h][0] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_slli_epi32(w, 16)), x0, acc[0][h][0]);
            acc[0][h][1] = _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_and_si256(w, hiMask)), x1, acc[0][h][1]);
        }
    }
    const __m256 lo =
        _mm256_add_ps(_mm256_add_ps(acc[0][0][0], acc[0][0][1]), _mm256_add_ps(acc[1][0][0], acc[1][0][1]));
    const __m256 hi =
        _mm256_add_ps(_mm256_add_ps(acc[0][1][0], acc[0][1][1]), _mm256_add_ps(acc[1][1][0], acc[1][1][1]));
    storeRows(out, lo, hi, lanes);
}

// TT tokens of one block for a prompt or a decode batch, the even and odd input of a pair chained
// on one accumulator per half and token (as the AVX-512 bf16TwoBlocks). At TT = 5 the 10
// accumulators, the block's 4 widened vectors and a token's 2 broadcasts fill the 16 registers
// (the mask is reloaded), and 10 chains of two dependent FMAs keep both FMA ports busy. The
// loops are unrolled so that the accumulators live in registers only: rolled, GCC kept the array
// in memory and stored every accumulator on every pair. bf16Block (4 x TT accumulators, even and
// odd apart) ran a 128-token prompt at ~70 GFLOP/s on two Zen 4 cores; this kernel at 155-185,
// near the AVX-512F kernel's 175-200 on the same FMA units (cpu_kernel_bench --isa avx2).
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
    const int K = w.cols(), N = w.rows(), P = w.pairs();
    for (int b = b0; b < b1; ++b) {
        const uint16_t* wb = w.bf16Block(b);
        const int lanes = std::min(kB, N - b * kB);
        if (T >= kChainedMinTokens) {
            for (int t = 0; t < T; t += kChainedTokens) {
                const float* xt = x + int64_t(t) * K;
                float* ot = out + int64_t(t) * N + b * kB;
                switch (std::min(kChainedTokens, T - t)) {
                case 1: bf16BlockChained<1>(wb, P, xt, K, ot, N, lanes); break;
                case 2: bf16BlockChained<2>(wb, P, xt, K, ot, N, lanes); break;
                case 3: bf16BlockChained<3>(wb, P, xt, K, ot, N, lanes); break;
                case 4: bf16BlockChained<4>(wb, P, xt, K, ot, N, lanes); break;
                default: bf16BlockChained<kChainedTokens>(wb, P, xt, K, ot, N, lanes); break;
                }
            }
            continue;
        }
        // 1-3 decodes stream the block from memory: even and odd apart keep 4 x T independent
        // FMA chains (8 for one decode), so the FMA latency does not hold the stream up.
        float* ot = out + b * kB;
        switch (T) {
        case 1: bf16BlockOneToken(wb, P, x, ot, lanes); break;
        case 2: bf16Block<2>(wb, P, x, K, ot, N, lanes); break;
        default: bf16Block<3>(wb, P, x, K, ot, N, lanes); break;
        }
    }
}

}  // namespace brook::cpu::kernels
