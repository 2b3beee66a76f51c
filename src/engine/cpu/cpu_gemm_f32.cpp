// fp32 Linears (fp16 / fp32 checkpoints, dequantized groups the int8 kernels cannot take) on the
// row-major [N][K] matrix. Not OpenBLAS: its sgemv (one row) and sgemm (small-matrix kernel or
// K-blocked, by shape) sum in orders that depend on T, so a token's output would depend on what
// else is in the step. Here every output out[t, n] is one accumulator of L lanes over k (lane j
// takes k = j, j + L, ... in order; the tail lanes masked to 0), reduced in one fixed tree, the
// same whatever the tile it falls in (batch invariance, docs/server.md "Determinism").
// Tiles of R rows x TT tokens share their loads: R + TT loads feed R x TT FMAs.
#include "engine/cpu/cpu_gemm_kernels.h"

#include <immintrin.h>

#include <algorithm>

#if defined(__GNUC__) && !defined(__clang__)  // see cpu_gemm_avx512.cpp
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"  // _mm512_reduce_add_ps's _mm512_undefined_ps
#endif

#define BROOK_AVX2 __attribute__((target("avx2,fma")))
#define BROOK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

namespace brook::cpu::kernels {

namespace {

constexpr int kB = CpuMatrix::kBlockRows;
constexpr int kRows = 4;  // rows a tile
constexpr int kTokens = 4;

// Runs tile(R, TT, n0, t0) over rows [n0, n1) x tokens [0, T) in tiles of at most kRows x kTokens.
template <typename Tile>
inline void forTiles(int n0, int n1, int T, const Tile& tile)
{
    for (int n = n0; n < n1; n += kRows)
        for (int t = 0; t < T; t += kTokens) tile(std::min(kRows, n1 - n), std::min(kTokens, T - t), n, t);
}

template <int R, int TT>
BROOK_AVX512 inline void stepAvx512(__m512 (&acc)[R][TT], const float* w, int K, const float* x, int k, __mmask16 m)
{
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = _mm512_maskz_loadu_ps(m, w + int64_t(r) * K + k);
    for (int t = 0; t < TT; ++t) {
        const __m512 xv = _mm512_maskz_loadu_ps(m, x + int64_t(t) * K + k);
        for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
}

template <int R, int TT>
BROOK_AVX512 void tileAvx512(const float* w, int K, const float* x, float* out, int N)
{
    __m512 acc[R][TT];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < TT; ++t) acc[r][t] = _mm512_setzero_ps();
    int k = 0;
    for (; k + 16 <= K; k += 16) stepAvx512<R, TT>(acc, w, K, x, k, __mmask16(0xFFFF));
    if (k < K) stepAvx512<R, TT>(acc, w, K, x, k, __mmask16((1u << (K - k)) - 1));
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < TT; ++t) out[int64_t(t) * N + r] = _mm512_reduce_add_ps(acc[r][t]);
}

// The 8 lanes of v summed in a fixed tree: (0+4, 1+5, 2+6, 3+7), then pairs, then the two.
BROOK_AVX2 inline float sum8(__m256 v)
{
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// kFull: 8 inputs from k; else the K - k < 8 left, through `m` (the others read as 0).
template <int R, int TT, bool kFull>
BROOK_AVX2 inline void stepAvx2(__m256 (&acc)[R][TT], const float* w, int K, const float* x, int k, __m256i m)
{
    __m256 wv[R];
    for (int r = 0; r < R; ++r) {
        const float* wr = w + int64_t(r) * K + k;
        wv[r] = kFull ? _mm256_loadu_ps(wr) : _mm256_maskload_ps(wr, m);
    }
    for (int t = 0; t < TT; ++t) {
        const float* xt = x + int64_t(t) * K + k;
        const __m256 xv = kFull ? _mm256_loadu_ps(xt) : _mm256_maskload_ps(xt, m);
        for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
    }
}

template <int R, int TT>
BROOK_AVX2 void tileAvx2(const float* w, int K, const float* x, float* out, int N)
{
    __m256 acc[R][TT];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < TT; ++t) acc[r][t] = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= K; k += 8) stepAvx2<R, TT, true>(acc, w, K, x, k, _mm256_setzero_si256());
    if (k < K) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        stepAvx2<R, TT, false>(acc, w, K, x, k, _mm256_cmpgt_epi32(_mm256_set1_epi32(K - k), lane));
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < TT; ++t) out[int64_t(t) * N + r] = sum8(acc[r][t]);
}

// tile<R, TT> for R, TT in 1..4, chosen at run time.
template <template <int, int> class Kernel>
void dispatch(int R, int TT, const float* w, int K, const float* x, float* out, int N)
{
    using Fn = void (*)(const float*, int, const float*, float*, int);
    static constexpr Fn table[kRows][kTokens] = {
        {Kernel<1, 1>::run, Kernel<1, 2>::run, Kernel<1, 3>::run, Kernel<1, 4>::run},
        {Kernel<2, 1>::run, Kernel<2, 2>::run, Kernel<2, 3>::run, Kernel<2, 4>::run},
        {Kernel<3, 1>::run, Kernel<3, 2>::run, Kernel<3, 3>::run, Kernel<3, 4>::run},
        {Kernel<4, 1>::run, Kernel<4, 2>::run, Kernel<4, 3>::run, Kernel<4, 4>::run},
    };
    table[R - 1][TT - 1](w, K, x, out, N);
}

template <int R, int TT>
struct Avx512Tile {
    static void run(const float* w, int K, const float* x, float* out, int N) { tileAvx512<R, TT>(w, K, x, out, N); }
};
template <int R, int TT>
struct Avx2Tile {
    static void run(const float* w, int K, const float* x, float* out, int N) { tileAvx2<R, TT>(w, K, x, out, N); }
};

}  // namespace

void f32Scalar(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1)
{
    const int K = w.cols(), N = w.rows();
    for (int n = b0 * kB; n < std::min(N, b1 * kB); ++n)
        for (int t = 0; t < T; ++t) {
            const float* wn = w.f32() + int64_t(n) * K;
            const float* xt = x + int64_t(t) * K;
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += wn[k] * xt[k];
            out[int64_t(t) * N + n] = acc;
        }
}

void f32Avx2(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1)
{
    const int K = w.cols(), N = w.rows();
    forTiles(b0 * kB, std::min(N, b1 * kB), T, [&](int R, int TT, int n, int t) {
        dispatch<Avx2Tile>(R, TT, w.f32() + int64_t(n) * K, K, x + int64_t(t) * K, out + int64_t(t) * N + n, N);
    });
}

void f32Avx512(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1)
{
    const int K = w.cols(), N = w.rows();
    forTiles(b0 * kB, std::min(N, b1 * kB), T, [&](int R, int TT, int n, int t) {
        dispatch<Avx512Tile>(R, TT, w.f32() + int64_t(n) * K, K, x + int64_t(t) * K, out + int64_t(t) * N + n, N);
    });
}

}  // namespace brook::cpu::kernels
