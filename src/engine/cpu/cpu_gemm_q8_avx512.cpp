// The int8 scheme (cpu_gemm_q8.h) on AVX-512: the activation quantizer (AVX-512F/BW) and the
// vpdpbusd kernel (AVX-512 VNNI). GCC target attributes, as cpu_gemm_avx512.cpp: the binary runs
// on CPUs without them, and matmul calls these only when cpuid says so.
#include "engine/cpu/cpu_gemm_q8.h"
#include "engine/cpu/weight_prefetch.h"

#include <immintrin.h>

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized in target-attribute functions (see
// cpu_gemm_avx512.cpp): a known false positive.
#if defined(__GNUC__) && !defined(__clang__)  // a GCC warning: clang has no such group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cstring>

#define BROOK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#define BROOK_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))

namespace brook::cpu::kernels {

namespace {

constexpr int kB = CpuMatrix::kBlockRows;
constexpr int kQ = CpuMatrix::kQ8Block;
constexpr int kStepBytes = 64;          // 16 rows x 4 inputs
constexpr int kStepsPerBlock = kQ / 4;  // 8 vpdpbusd per token per 32 inputs
// The few-token kernel's software prefetch, kWeightPrefetchBytes ahead or none, as the backend
// chose at load (weight_prefetch.h: it helps on some CPUs and hurts on others). 4 KB: on the Zen 5
// VM a 106 MB int8 lm head streamed 5-10% faster than at 2 KB.
constexpr int kPrefetchBytes = kWeightPrefetchBytes;

inline int32_t load4(const int8_t* p)
{
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Step s's 64-byte operand of a block's codes from wk (the codes of one 32-input block): Q8
// loads it; Q4 (kNib) loads the 64 bytes that hold steps s & ~1 and s | 1 and keeps one nibble.
template <bool kNib>
BROOK_AVX512 inline __m512i loadStep(const uint8_t* wk, int s)
{
    if constexpr (!kNib) {
        return _mm512_loadu_si512(wk + s * kStepBytes);
    } else {
        const __m512i v = _mm512_loadu_si512(wk + (s / 2) * kStepBytes);
        const __m512i low = _mm512_set1_epi8(0x0F);
        return (s & 1) ? _mm512_and_si512(_mm512_srli_epi16(v, 4), low) : _mm512_and_si512(v, low);
    }
}

// Bytes of codes per 32-input block.
template <bool kNib>
constexpr size_t kBlockCodeBytes = size_t(kStepsPerBlock) * kStepBytes / (kNib ? 2 : 1);

BROOK_AVX512 inline void storeRows(float* dst, __m512 v, int lanes)
{
    if (lanes == kB) _mm512_storeu_ps(dst, v);
    else _mm512_mask_storeu_ps(dst, __mmask16((1u << lanes) - 1), v);
}

// TT tokens (t0 ..) of one 16-row block. For TT <= 2 two int32 chains per token alternate steps,
// so a decode GEMV does not wait on vpdpbusd's latency. kPrefetch: one software prefetch per
// 64-byte step, kPrefetchBytes ahead.
template <int TT, bool kNib, bool kPrefetch>
BROOK_AVX512VNNI void vnniTokens(const uint8_t* wb, const float* ws, const float* wo, const Q8Activations& a, int t0,
                                 float* out, int N, int lanes)
{
    constexpr bool kSplit = TT <= 2;
    const int K = a.K, KB = K / kQ, G = a.G, blocksPerGroup = KB / G;
    const int8_t* act = a.codes + int64_t(t0) * K;
    __m512 acc[TT];
    for (int t = 0; t < TT; ++t) acc[t] = _mm512_setzero_ps();
    for (int g = 0; g < G; ++g) {
        __m512 inner[TT];
        for (int t = 0; t < TT; ++t) inner[t] = _mm512_setzero_ps();
        for (int kb = g * blocksPerGroup; kb < (g + 1) * blocksPerGroup; ++kb) {
            const uint8_t* wk = wb + size_t(kb) * kBlockCodeBytes<kNib>;
            __m512i d0[TT], d1[TT];
            for (int t = 0; t < TT; ++t) d0[t] = d1[t] = _mm512_setzero_si512();
            for (int s = 0; s < kStepsPerBlock; ++s) {
                if constexpr (kPrefetch)
                    _mm_prefetch(reinterpret_cast<const char*>(wk + (s * kStepBytes >> kNib) + kPrefetchBytes),
                                 _MM_HINT_T0);
                const __m512i w = loadStep<kNib>(wk, s);
                for (int t = 0; t < TT; ++t) {
                    const __m512i x = _mm512_set1_epi32(load4(act + int64_t(t) * K + kb * kQ + 4 * s));
                    if (kSplit && (s & 1)) d1[t] = _mm512_dpbusd_epi32(d1[t], w, x);
                    else d0[t] = _mm512_dpbusd_epi32(d0[t], w, x);
                }
            }
            for (int t = 0; t < TT; ++t) {
                const __m512i dot = kSplit ? _mm512_add_epi32(d0[t], d1[t]) : d0[t];
                const __m512 d = _mm512_set1_ps(a.scales[int64_t(t0 + t) * KB + kb]);
                inner[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), d, inner[t]);
            }
        }
        const __m512 s = _mm512_loadu_ps(ws + g * kB), o = _mm512_loadu_ps(wo + g * kB);
        for (int t = 0; t < TT; ++t) {
            acc[t] = _mm512_fmadd_ps(inner[t], s, acc[t]);
            acc[t] = _mm512_fmadd_ps(o, _mm512_set1_ps(a.groupSums[int64_t(t0 + t) * G + g]), acc[t]);
        }
    }
    for (int t = 0; t < TT; ++t) storeRows(out + int64_t(t0 + t) * N, acc[t], lanes);
}

// Two blocks (32 rows) x TT tokens: each broadcast activation feeds two vpdpbusd, so a prompt
// is bound by the dot products rather than by the broadcast loads (the one-block kernel loads
// one broadcast per vpdpbusd). The fp32 steps per row and token are the one-block kernel's, in
// the same order, so the output is the same bit for bit.
template <int TT, bool kNib>
BROOK_AVX512VNNI void vnniTwoBlocks(const CpuMatrix& w, int b, const Q8Activations& a, int t0, float* out, int N)
{
    const int K = a.K, KB = K / kQ, G = a.G, blocksPerGroup = KB / G;
    const int8_t* act = a.codes + int64_t(t0) * K;
    const uint8_t* wb[2] = {w.q8Block(b), w.q8Block(b + 1)};
    const float* ws[2] = {w.q8Scales(b), w.q8Scales(b + 1)};
    const float* wo[2] = {w.q8Offsets(b), w.q8Offsets(b + 1)};
    __m512 acc[2][TT];
    for (int t = 0; t < TT; ++t) acc[0][t] = acc[1][t] = _mm512_setzero_ps();
    for (int g = 0; g < G; ++g) {
        __m512 inner[2][TT];
        for (int t = 0; t < TT; ++t) inner[0][t] = inner[1][t] = _mm512_setzero_ps();
        for (int kb = g * blocksPerGroup; kb < (g + 1) * blocksPerGroup; ++kb) {
            const size_t at = size_t(kb) * kBlockCodeBytes<kNib>;
            __m512i dot[2][TT];
            for (int t = 0; t < TT; ++t) dot[0][t] = dot[1][t] = _mm512_setzero_si512();
            for (int s = 0; s < kStepsPerBlock; ++s) {
                const __m512i w0 = loadStep<kNib>(wb[0] + at, s);
                const __m512i w1 = loadStep<kNib>(wb[1] + at, s);
                for (int t = 0; t < TT; ++t) {
                    const __m512i x = _mm512_set1_epi32(load4(act + int64_t(t) * K + kb * kQ + 4 * s));
                    dot[0][t] = _mm512_dpbusd_epi32(dot[0][t], w0, x);
                    dot[1][t] = _mm512_dpbusd_epi32(dot[1][t], w1, x);
                }
            }
            for (int t = 0; t < TT; ++t) {
                const __m512 d = _mm512_set1_ps(a.scales[int64_t(t0 + t) * KB + kb]);
                for (int h = 0; h < 2; ++h)
                    inner[h][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[h][t]), d, inner[h][t]);
            }
        }
        for (int h = 0; h < 2; ++h) {
            const __m512 s = _mm512_loadu_ps(ws[h] + g * kB), o = _mm512_loadu_ps(wo[h] + g * kB);
            for (int t = 0; t < TT; ++t) {
                acc[h][t] = _mm512_fmadd_ps(inner[h][t], s, acc[h][t]);
                acc[h][t] = _mm512_fmadd_ps(o, _mm512_set1_ps(a.groupSums[int64_t(t0 + t) * G + g]), acc[h][t]);
            }
        }
    }
    for (int h = 0; h < 2; ++h) {
        const int lanes = std::min(kB, N - (b + h) * kB);
        for (int t = 0; t < TT; ++t) storeRows(out + int64_t(t0 + t) * N + (b + h) * kB, acc[h][t], lanes);
    }
}

}  // namespace

BROOK_AVX512 void quantizeQ8Avx512(const float* x, int64_t blocks, int8_t* codes, float* scales, int32_t* sums)
{
    const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
    for (int64_t b = 0; b < blocks; ++b) {
        const __m512 v0 = _mm512_loadu_ps(x + b * kQ), v1 = _mm512_loadu_ps(x + b * kQ + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const float d = amax / 127.0f;
        const __m512 id = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
        // Round half to even, as the scalar std::nearbyint in the default rounding mode.
        const __m512i q0 = _mm512_max_epi32(
            lo, _mm512_min_epi32(hi, _mm512_cvt_roundps_epi32(_mm512_mul_ps(v0, id),
                                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
        const __m512i q1 = _mm512_max_epi32(
            lo, _mm512_min_epi32(hi, _mm512_cvt_roundps_epi32(_mm512_mul_ps(v1, id),
                                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + b * kQ), _mm512_cvtepi32_epi8(q0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + b * kQ + 16), _mm512_cvtepi32_epi8(q1));
        scales[b] = d;
        sums[b] = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
    }
}

namespace {

template <bool kNib, bool kPrefetch>
BROOK_AVX512VNNI void vnniMatmul(const CpuMatrix& w, const Q8Activations& a, float* out, int b0, int b1)
{
    const int N = w.rows();
    int b = b0;
    // 4 or more tokens: two blocks at a time, 4 tokens a pass (24 accumulators of 32 registers).
    for (; a.T >= 4 && b + 2 <= b1; b += 2) {
        for (int t = 0; t < a.T; t += 4) {
            switch (std::min(4, a.T - t)) {
            case 1: vnniTwoBlocks<1, kNib>(w, b, a, t, out, N); break;
            case 2: vnniTwoBlocks<2, kNib>(w, b, a, t, out, N); break;
            case 3: vnniTwoBlocks<3, kNib>(w, b, a, t, out, N); break;
            default: vnniTwoBlocks<4, kNib>(w, b, a, t, out, N); break;
            }
        }
    }
    for (; b < b1; ++b) {
        const int lanes = std::min(kB, N - b * kB);
        const uint8_t* wb = w.q8Block(b);
        const float* ws = w.q8Scales(b);
        const float* wo = w.q8Offsets(b);
        // Up to 8 tokens share one pass over the block; the block (K x 16 bytes) stays in L1/L2
        // for the next 8.
        for (int t = 0; t < a.T; t += 8) {
            float* ob = out + b * kB;
            switch (std::min(8, a.T - t)) {
            case 1: vnniTokens<1, kNib, kPrefetch>(wb, ws, wo, a, t, ob, N, lanes); break;
            case 2: vnniTokens<2, kNib, kPrefetch>(wb, ws, wo, a, t, ob, N, lanes); break;
            case 3: vnniTokens<3, kNib, kPrefetch>(wb, ws, wo, a, t, ob, N, lanes); break;
            case 4: vnniTokens<4, kNib, kPrefetch>(wb, ws, wo, a, t, ob, N, lanes); break;
            case 5: vnniTokens<5, kNib, kPrefetch>(wb, ws, wo, a, t, ob, N, lanes); break;
            case 6: vnniTokens<6, kNib, kPrefetch>(wb, ws, wo, a, t, ob, N, lanes); break;
            case 7: vnniTokens<7, kNib, kPrefetch>(wb, ws, wo, a, t, ob, N, lanes); break;
            default: vnniTokens<8, kNib, kPrefetch>(wb, ws, wo, a, t, ob, N, lanes); break;
            }
        }
    }
}

}  // namespace

BROOK_AVX512VNNI void q8Avx512Vnni(const CpuMatrix& w, const Q8Activations& a, float* out, int b0, int b1)
{
    const bool prefetch = weightPrefetch();
    if (w.nibbles()) {
        if (prefetch) vnniMatmul<true, true>(w, a, out, b0, b1);
        else vnniMatmul<true, false>(w, a, out, b0, b1);
    } else {
        if (prefetch) vnniMatmul<false, true>(w, a, out, b0, b1);
        else vnniMatmul<false, false>(w, a, out, b0, b1);
    }
}

}  // namespace brook::cpu::kernels
