// AVX2 + FMA kernels: the floor of the vector paths (any x86-64 CPU since 2013-2015). Same
// layouts as the AVX-512 ones; a 16-row block is two 8-lane halves.
#include "engine/cpu/cpu_gemm_kernels.h"

#include <immintrin.h>

#include <algorithm>

#define BROOK_AVX2 __attribute__((target("avx2,fma")))

namespace brook::cpu::kernels {

namespace {

constexpr int kB = CpuMatrix::kBlockRows;

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
    for (int h = 0; h < 2; ++h)
        for (int t = 0; t < TT; ++t) acc[h][0][t] = acc[h][1][t] = _mm256_setzero_ps();
    const __m256i hiMask = _mm256_set1_epi32(int(0xFFFF0000u));
    for (int p = 0; p < P; ++p) {
        for (int h = 0; h < 2; ++h) {
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + size_t(p) * 32 + h * 16));
            const __m256 we = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
            const __m256 wo = _mm256_castsi256_ps(_mm256_and_si256(w, hiMask));
            for (int t = 0; t < TT; ++t) {
                const float* xt = x + int64_t(t) * K + 2 * p;
                acc[h][0][t] = _mm256_fmadd_ps(we, _mm256_broadcast_ss(xt), acc[h][0][t]);
                acc[h][1][t] = _mm256_fmadd_ps(wo, _mm256_broadcast_ss(xt + 1), acc[h][1][t]);
            }
        }
    }
    for (int t = 0; t < TT; ++t)
        storeRows(out + int64_t(t) * N, _mm256_add_ps(acc[0][0][t], acc[0][1][t]),
                  _mm256_add_ps(acc[1][0][t], acc[1][1][t]), lanes);
}

}  // namespace

BROOK_AVX2 void bf16Avx2(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1)
{
    const int K = w.cols(), N = w.rows(), P = w.pairs();
    for (int b = b0; b < b1; ++b) {
        const uint16_t* wb = w.bf16Block(b);
        const int lanes = std::min(kB, N - b * kB);
        for (int t = 0; t < T; t += 3) {  // 3 tokens: 12 accumulators of AVX2's 16 registers
            const float* xt = x + int64_t(t) * K;
            float* ot = out + int64_t(t) * N + b * kB;
            switch (std::min(3, T - t)) {
            case 1: bf16Block<1>(wb, P, xt, K, ot, N, lanes); break;
            case 2: bf16Block<2>(wb, P, xt, K, ot, N, lanes); break;
            default: bf16Block<3>(wb, P, xt, K, ot, N, lanes); break;
            }
        }
    }
}

}  // namespace brook::cpu::kernels
