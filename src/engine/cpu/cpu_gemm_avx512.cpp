// AVX-512 kernels (compiled per function with GCC target attributes, so the file builds without
// -mavx512f and the binary still runs on CPUs without it; matmul calls them only when cpuid says so).
// Register use per 16-row block: TT tokens x {even, odd input} fp32 accumulators, lanes = rows.
#include "engine/cpu/cpu_gemm_kernels.h"
#include "engine/cpu/weight_prefetch.h"

#include <immintrin.h>

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized in target-attribute functions
// (_mm512_undefined_* behind reductions and conversions): a known false positive.
#if defined(__GNUC__) && !defined(__clang__)  // a GCC warning: clang has no such group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>

#define BROOK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#define BROOK_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma")))

namespace brook::cpu::kernels {

namespace {

constexpr int kB = CpuMatrix::kBlockRows;
constexpr int kPrefetchPairs = 32;  // 32 x 64 bytes
// The vdpbf16ps kernel's distance when it prefetches (weight_prefetch.h), 4 KB a stream: a
// batch-8 decode does 16 products per 128 bytes of weights, so 2 KB ahead was too close to cover
// the Zen 5 VM's memory latency. Measured in one process, steps alternating between distances
// (cpu_step_bench, batch 8, 150 steps, four runs): medians 0.6-1.5 ms a step lower at 64 pairs
// than at 32; 48, 96 and 128 in between or worse; a prompt (compute-bound) the same at every
// distance.
constexpr int kDotPrefetchPairs = kWeightPrefetchBytes / 64;
// bf16 activations of one token tile in the vdpbf16ps kernel: 128 KB (64 tokens at K = 1,024,
// 16 at K = 3,072) leaves most of a 1-2 MB L2 to the thread's weight blocks.
constexpr int kDotTokenTileBytes = 128 * 1024;

BROOK_AVX512 inline void storeRows(float* dst, __m512 v, int lanes)
{
    if (lanes == kB) _mm512_storeu_ps(dst, v);
    else _mm512_mask_storeu_ps(dst, __mmask16((1u << lanes) - 1), v);
}

// Two blocks (32 rows) x TT tokens, widening: each broadcast activation feeds two FMAs, so a
// batch of 4-8 decodes is bound by the FMAs rather than by the broadcast loads (one
// accumulator per block and token; the even and odd inputs chain on it). The only widening
// kernel, for every T (batch invariance: see bf16Avx512); a lone last block runs as both blocks
// and stores once (lanes1 = 0).
template <int TT>
BROOK_AVX512 void bf16TwoBlocks(const uint16_t* w0, const uint16_t* w1, int P, const float* x, int K, float* out, int N,
                                int lanes0, int lanes1)
{
    __m512 acc[2][TT];
    for (int t = 0; t < TT; ++t) acc[0][t] = acc[1][t] = _mm512_setzero_ps();
    const __m512i hi = _mm512_set1_epi32(int(0xFFFF0000u));
    for (int p = 0; p < P; ++p) {
        // 2 KB ahead in both streams: with the FMAs in between the hardware prefetcher alone
        // left a 212 MB lm head at 11.5 GB/s on one core.
        _mm_prefetch(reinterpret_cast<const char*>(w0 + size_t(p + kPrefetchPairs) * 32), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(w1 + size_t(p + kPrefetchPairs) * 32), _MM_HINT_T0);
        const __m512i a = _mm512_loadu_si512(w0 + size_t(p) * 32);
        const __m512i b = _mm512_loadu_si512(w1 + size_t(p) * 32);
        const __m512 ae = _mm512_castsi512_ps(_mm512_slli_epi32(a, 16)),
                     ao = _mm512_castsi512_ps(_mm512_and_si512(a, hi));
        const __m512 be = _mm512_castsi512_ps(_mm512_slli_epi32(b, 16)),
                     bo = _mm512_castsi512_ps(_mm512_and_si512(b, hi));
        for (int t = 0; t < TT; ++t) {
            const float* xt = x + int64_t(t) * K + 2 * p;
            const __m512 x0 = _mm512_set1_ps(xt[0]), x1 = _mm512_set1_ps(xt[1]);
            acc[0][t] = _mm512_fmadd_ps(ao, x1, _mm512_fmadd_ps(ae, x0, acc[0][t]));
            acc[1][t] = _mm512_fmadd_ps(bo, x1, _mm512_fmadd_ps(be, x0, acc[1][t]));
        }
    }
    for (int t = 0; t < TT; ++t) {
        storeRows(out + int64_t(t) * N, acc[0][t], lanes0);
        if (lanes1 > 0) storeRows(out + int64_t(t) * N + kB, acc[1][t], lanes1);
    }
}

// Two blocks (32 rows) x TT tokens of bf16 products: the prefill micro-kernel. kPrefetch: the
// weight streams prefetched kDotPrefetchPairs ahead, or left to the hardware prefetcher (chosen
// at load, weight_prefetch.h).
template <int TT, bool kPrefetch>
BROOK_AVX512BF16 void dotBlocks(const uint16_t* w0, const uint16_t* w1, int P, const uint32_t* xPairs, float* out,
                                int N, int lanes0, int lanes1)
{
    __m512 acc[2][TT];
    for (int t = 0; t < TT; ++t) acc[0][t] = acc[1][t] = _mm512_setzero_ps();
    for (int p = 0; p < P; ++p) {
        // As in bf16TwoBlocks: a decode batch streams the weights from memory with enough work
        // between loads that the hardware prefetcher alone falls behind.
        if constexpr (kPrefetch) {
            _mm_prefetch(reinterpret_cast<const char*>(w0 + size_t(p + kDotPrefetchPairs) * 32), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(w1 + size_t(p + kDotPrefetchPairs) * 32), _MM_HINT_T0);
        }
        const __m512bh a = (__m512bh)_mm512_loadu_si512(w0 + size_t(p) * 32);
        const __m512bh b = (__m512bh)_mm512_loadu_si512(w1 + size_t(p) * 32);
        for (int t = 0; t < TT; ++t) {
            const __m512bh xv = (__m512bh)_mm512_set1_epi32(int(xPairs[int64_t(t) * P + p]));
            acc[0][t] = _mm512_dpbf16_ps(acc[0][t], a, xv);
            acc[1][t] = _mm512_dpbf16_ps(acc[1][t], b, xv);
        }
    }
    for (int t = 0; t < TT; ++t) {
        storeRows(out + int64_t(t) * N, acc[0][t], lanes0);
        if (lanes1 > 0) storeRows(out + int64_t(t) * N + kB, acc[1][t], lanes1);
    }
}

}  // namespace

BROOK_AVX512 void bf16Avx512(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1)
{
    // One kernel and one summation order for every T, so a row's output does not depend on what
    // else is in the step (batch invariance, docs/server.md "Determinism"): the decode kernels
    // this replaced (4 or 2 accumulator sets for 1-2 tokens, even and odd inputs apart) summed
    // in other orders.
    const int K = w.cols(), N = w.rows(), P = w.pairs();
    for (int b = b0; b < b1; b += 2) {
        const bool two = b + 1 < b1;
        const uint16_t* w0 = w.bf16Block(b);
        const uint16_t* w1 = two ? w.bf16Block(b + 1) : w0;
        const int lanes0 = std::min(kB, N - b * kB), lanes1 = two ? std::min(kB, N - (b + 1) * kB) : 0;
        for (int t = 0; t < T; t += 8) {
            const float* xt = x + int64_t(t) * K;
            float* ot = out + int64_t(t) * N + b * kB;
            switch (std::min(8, T - t)) {
            case 1: bf16TwoBlocks<1>(w0, w1, P, xt, K, ot, N, lanes0, lanes1); break;
            case 2: bf16TwoBlocks<2>(w0, w1, P, xt, K, ot, N, lanes0, lanes1); break;
            case 3: bf16TwoBlocks<3>(w0, w1, P, xt, K, ot, N, lanes0, lanes1); break;
            case 4: bf16TwoBlocks<4>(w0, w1, P, xt, K, ot, N, lanes0, lanes1); break;
            case 5: bf16TwoBlocks<5>(w0, w1, P, xt, K, ot, N, lanes0, lanes1); break;
            case 6: bf16TwoBlocks<6>(w0, w1, P, xt, K, ot, N, lanes0, lanes1); break;
            case 7: bf16TwoBlocks<7>(w0, w1, P, xt, K, ot, N, lanes0, lanes1); break;
            default: bf16TwoBlocks<8>(w0, w1, P, xt, K, ot, N, lanes0, lanes1); break;
            }
        }
    }
}

namespace {

template <bool kPrefetch>
BROOK_AVX512BF16 void bf16Dot(const CpuMatrix& w, const uint32_t* xPairs, int T, float* out, int b0, int b1)
{
    const int N = w.rows(), P = w.pairs();
    // Tokens in tiles: a long prompt's bf16 activations (T x K x 2 bytes, 8 MB for 4,096 tokens)
    // would otherwise be streamed again for every pair of blocks; a tile stays in L2 while this
    // thread's blocks pass over it.
    const int tile = std::max(8, kDotTokenTileBytes / (P * 4) / 8 * 8);
    for (int t0 = 0; t0 < T; t0 += tile) {
        const int t1 = std::min(T, t0 + tile);
        for (int b = b0; b < b1; b += 2) {
            const bool two = b + 1 < b1;
            const uint16_t* w0 = w.bf16Block(b);
            const uint16_t* w1 = two ? w.bf16Block(b + 1) : w0;  // a lone block computes itself twice, stores once
            const int lanes0 = std::min(kB, N - b * kB);
            const int lanes1 = two ? std::min(kB, N - (b + 1) * kB) : 0;
            for (int t = t0; t < t1; t += 8) {
                const uint32_t* xt = xPairs + int64_t(t) * P;
                float* ot = out + int64_t(t) * N + b * kB;
                switch (std::min(8, t1 - t)) {
                case 1: dotBlocks<1, kPrefetch>(w0, w1, P, xt, ot, N, lanes0, lanes1); break;
                case 2: dotBlocks<2, kPrefetch>(w0, w1, P, xt, ot, N, lanes0, lanes1); break;
                case 3: dotBlocks<3, kPrefetch>(w0, w1, P, xt, ot, N, lanes0, lanes1); break;
                case 4: dotBlocks<4, kPrefetch>(w0, w1, P, xt, ot, N, lanes0, lanes1); break;
                case 5: dotBlocks<5, kPrefetch>(w0, w1, P, xt, ot, N, lanes0, lanes1); break;
                case 6: dotBlocks<6, kPrefetch>(w0, w1, P, xt, ot, N, lanes0, lanes1); break;
                case 7: dotBlocks<7, kPrefetch>(w0, w1, P, xt, ot, N, lanes0, lanes1); break;
                default: dotBlocks<8, kPrefetch>(w0, w1, P, xt, ot, N, lanes0, lanes1); break;
                }
            }
        }
    }
}

}  // namespace

BROOK_AVX512BF16 void bf16DotAvx512(const CpuMatrix& w, const uint32_t* xPairs, int T, float* out, int b0, int b1)
{
    if (weightPrefetch()) bf16Dot<true>(w, xPairs, T, out, b0, b1);
    else bf16Dot<false>(w, xPairs, T, out, b0, b1);
}

BROOK_AVX512BF16 void toBf16PairsAvx512Bf16(const float* x, int T, int K, uint32_t* xPairs)
{
    const int P = (K + 1) / 2;
    const auto lanes = [](int count) {  // the first min(count, 16) of 16 lanes
        return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
    };
    for (int t = 0; t < T; ++t) {
        const float* xt = x + int64_t(t) * K;
        uint32_t* dst = xPairs + int64_t(t) * P;
        for (int k = 0; k < K; k += 32) {
            // cvtne2ps(hi, lo): the low 16 bf16 come from the second operand, in order, so the
            // 32 results are inputs k..k+31 and each uint32 holds the pair (2p, 2p + 1). Past K
            // the loads read 0: an odd K's last pair gets 0 as its high half, as the scalar code.
            const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(lanes(K - k - 16), xt + k + 16),
                                                   _mm512_maskz_loadu_ps(lanes(K - k), xt + k));
            _mm512_mask_storeu_epi32(dst + k / 2, lanes((K - k + 1) / 2), (__m512i)v);
        }
    }
}

}  // namespace brook::cpu::kernels
