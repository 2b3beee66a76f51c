// The int8 scheme (cpu_gemm_q8.h) on AVX2: the floor of the vector paths, and the int8 path of
// AVX-512 CPUs without VNNI. AVX2 has no u8 x s8 dot into int32 without saturation: vpmaddubsw
// adds two u8 x s8 products into int16, and 255 * 127 * 2 overflows it. So the codes are taken
// as q - 128 (a byte xor) and multiplied as |q - 128| (u8, at most 128) with a * sign(q - 128)
// (s8, |.| <= 127): each int16 pair sum is at most 128 * 127 * 2 = 32,512, exact; vpmaddwd then
// widens to int32, and 128 A_b restores sum q a. Same integers, so the same output as every path.
#include "engine/cpu/cpu_gemm_q8.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#define BROOK_AVX2 __attribute__((target("avx2,fma")))

namespace brook::cpu::kernels {

namespace {

constexpr int kB = CpuMatrix::kBlockRows;
constexpr int kQ = CpuMatrix::kQ8Block;
constexpr int kStepBytes = 64;
constexpr int kStepsPerBlock = kQ / 4;

inline int32_t load4(const int8_t* p)
{
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

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

// TT tokens of one block; a block is two 8-row halves (h). 16 ymm registers hold TT = 2.
// Half h (rows 8h .. 8h + 7) of step s's operand (see the AVX-512 file's loadStep).
template <bool kNib>
BROOK_AVX2 inline __m256i loadHalf(const uint8_t* wk, int s, int h)
{
    if constexpr (!kNib) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk + s * kStepBytes + h * 32));
    } else {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wk + (s / 2) * kStepBytes + h * 32));
        const __m256i low = _mm256_set1_epi8(0x0F);
        return (s & 1) ? _mm256_and_si256(_mm256_srli_epi16(v, 4), low) : _mm256_and_si256(v, low);
    }
}

template <int TT, bool kNib>
BROOK_AVX2 void avx2Tokens(const uint8_t* wb, const float* ws, const float* wo, const Q8Activations& a, int t0,
                           float* out, int N, int lanes)
{
    const int K = a.K, KB = K / kQ, G = a.G, blocksPerGroup = KB / G;
    const int8_t* act = a.codes + int64_t(t0) * K;
    const __m256i flip = _mm256_set1_epi8(char(0x80)), ones = _mm256_set1_epi16(1);
    __m256 acc[2][TT];
    for (int t = 0; t < TT; ++t) acc[0][t] = acc[1][t] = _mm256_setzero_ps();
    for (int g = 0; g < G; ++g) {
        __m256 inner[2][TT];
        for (int t = 0; t < TT; ++t) inner[0][t] = inner[1][t] = _mm256_setzero_ps();
        for (int kb = g * blocksPerGroup; kb < (g + 1) * blocksPerGroup; ++kb) {
            const uint8_t* wk = wb + size_t(kb) * kStepsPerBlock * kStepBytes / (kNib ? 2 : 1);
            __m256i dot[2][TT];
            for (int t = 0; t < TT; ++t) dot[0][t] = dot[1][t] = _mm256_setzero_si256();
            for (int s = 0; s < kStepsPerBlock; ++s) {
                __m256i x[TT];
                for (int t = 0; t < TT; ++t) x[t] = _mm256_set1_epi32(load4(act + int64_t(t) * K + kb * kQ + 4 * s));
                for (int h = 0; h < 2; ++h) {
                    const __m256i w = loadHalf<kNib>(wk, s, h);
                    const __m256i centered = _mm256_xor_si256(w, flip);   // q - 128 as s8
                    const __m256i magnitude = _mm256_abs_epi8(centered);  // |q - 128| as u8 (128 stays 0x80)
                    for (int t = 0; t < TT; ++t) {
                        const __m256i pairs = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(x[t], centered));
                        dot[h][t] = _mm256_add_epi32(dot[h][t], _mm256_madd_epi16(pairs, ones));
                    }
                }
            }
            for (int t = 0; t < TT; ++t) {
                const __m256i bias = _mm256_set1_epi32(128 * a.blockSums[int64_t(t0 + t) * KB + kb]);
                const __m256 d = _mm256_set1_ps(a.scales[int64_t(t0 + t) * KB + kb]);
                for (int h = 0; h < 2; ++h)
                    inner[h][t] =
                        _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(dot[h][t], bias)), d, inner[h][t]);
            }
        }
        for (int h = 0; h < 2; ++h) {
            const __m256 s = _mm256_loadu_ps(ws + g * kB + h * 8), o = _mm256_loadu_ps(wo + g * kB + h * 8);
            for (int t = 0; t < TT; ++t) {
                acc[h][t] = _mm256_fmadd_ps(inner[h][t], s, acc[h][t]);
                acc[h][t] = _mm256_fmadd_ps(o, _mm256_set1_ps(a.groupSums[int64_t(t0 + t) * G + g]), acc[h][t]);
            }
        }
    }
    for (int t = 0; t < TT; ++t) {
        float* dst = out + int64_t(t0 + t) * N;
        storeHalf(dst, acc[0][t], lanes);
        if (lanes > 8) storeHalf(dst + 8, acc[1][t], lanes - 8);
    }
}

}  // namespace

BROOK_AVX2 void quantizeQ8Avx2(const float* x, int64_t blocks, int8_t* codes, float* scales, int32_t* sums)
{
    const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
    // packs_epi32 / packs_epi16 interleave the 128-bit lanes; this puts the 32 bytes back in order.
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t b = 0; b < blocks; ++b) {
        __m256 v[4];
        __m256 m = _mm256_setzero_ps();
        for (int i = 0; i < 4; ++i) {
            v[i] = _mm256_loadu_ps(x + b * kQ + 8 * i);
            m = _mm256_max_ps(m, _mm256_and_ps(v[i], absMask));
        }
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
        const float amax = _mm_cvtss_f32(m4);
        const float d = amax / 127.0f;
        const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
        __m256i q[4];
        __m256i sum = _mm256_setzero_si256();
        for (int i = 0; i < 4; ++i) {
            // vcvtps2dq rounds half to even in the default MXCSR mode, as std::nearbyint does.
            q[i] = _mm256_max_epi32(lo, _mm256_min_epi32(hi, _mm256_cvtps_epi32(_mm256_mul_ps(v[i], id))));
            sum = _mm256_add_epi32(sum, q[i]);
        }
        const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + b * kQ), _mm256_permutevar8x32_epi32(packed, order));
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(1, 0, 3, 2)));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));
        scales[b] = d;
        sums[b] = _mm_cvtsi128_si32(s4);
    }
}

namespace {

template <bool kNib>
BROOK_AVX2 void avx2Matmul(const CpuMatrix& w, const Q8Activations& a, float* out, int b0, int b1)
{
    const int N = w.rows();
    for (int b = b0; b < b1; ++b) {
        const int lanes = std::min(kB, N - b * kB);
        for (int t = 0; t < a.T; t += 2) {
            if (a.T - t >= 2)
                avx2Tokens<2, kNib>(w.q8Block(b), w.q8Scales(b), w.q8Offsets(b), a, t, out + b * kB, N, lanes);
            else avx2Tokens<1, kNib>(w.q8Block(b), w.q8Scales(b), w.q8Offsets(b), a, t, out + b * kB, N, lanes);
        }
    }
}

}  // namespace

BROOK_AVX2 void q8Avx2(const CpuMatrix& w, const Q8Activations& a, float* out, int b0, int b1)
{
    if (w.nibbles()) avx2Matmul<true>(w, a, out, b0, b1);
    else avx2Matmul<false>(w, a, out, b0, b1);
}

}  // namespace brook::cpu::kernels
