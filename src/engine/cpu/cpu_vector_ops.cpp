// The three implementations of CpuVectorOps. exp: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in
// a high part exact in fp32 and a low part), e^r by a degree-6 Taylor/minimax polynomial (Cephes'
// expf coefficients), times 2^n built in the exponent bits. Inputs are clamped to [-87.3, 88.3]
// so 2^n stays a normal float; below that e^x is under 1e-38, which no caller can tell from 0.
#include "engine/cpu/cpu_vector_ops.h"

#include "engine/cpu/cpu_attention_tiles.h"
#include "engine/cpu/cpu_ops.h"

#include <immintrin.h>

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized in target-attribute functions
// (_mm512_undefined_* behind reductions and conversions): a known false positive.
#if defined(__GNUC__) && !defined(__clang__)  // a GCC warning: clang has no such group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <cmath>

#define BROOK_AVX2 __attribute__((target("avx2,fma")))
#define BROOK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

namespace brook::cpu {

namespace {

constexpr float kExpHi = 88.3f, kExpLo = -87.3f;
constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f, kP3 = 4.1665795894e-2f,
                kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

// ---- scalar -------------------------------------------------------------------------------

float dotScalar(const float* a, const float* b, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}
void scaleScalar(float* y, float a, int n)
{
    for (int i = 0; i < n; ++i) y[i] *= a;
}
float expShiftedScalar(float* x, int n)
{
    float maxValue = -INFINITY;
    for (int i = 0; i < n; ++i) maxValue = std::max(maxValue, x[i]);
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - maxValue);
        sum += x[i];
    }
    return sum;
}

// ---- AVX2 ---------------------------------------------------------------------------------

BROOK_AVX2 inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

BROOK_AVX2 inline __m256 exp8(__m256 x)
{
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLo)), _mm256_set1_ps(kExpHi));
    const __m256 n =
        _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
    __m256 p = _mm256_set1_ps(kP0);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP5));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

BROOK_AVX2 float dotAvx2(const float* a, const float* b, int n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    float s = hsum(_mm256_add_ps(s0, s1));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}
BROOK_AVX2 void scaleAvx2(float* y, float a, int n)
{
    const __m256 av = _mm256_set1_ps(a);
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(av, _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] *= a;
}
BROOK_AVX2 float expShiftedAvx2(float* x, int n)
{
    __m256 maxv = _mm256_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 8 <= n; i += 8) maxv = _mm256_max_ps(maxv, _mm256_loadu_ps(x + i));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(maxv), _mm256_extractf128_ps(maxv, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    float maxValue = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    for (int j = i; j < n; ++j) maxValue = std::max(maxValue, x[j]);
    const __m256 mv = _mm256_set1_ps(maxValue);
    __m256 sumv = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
        _mm256_storeu_ps(x + i, e);
        sumv = _mm256_add_ps(sumv, e);
    }
    float sum = hsum(sumv);
    for (; i < n; ++i) {
        x[i] = std::exp(x[i] - maxValue);
        sum += x[i];
    }
    return sum;
}
BROOK_AVX2 void rmsnormAvx2(const float* x, const float* weight, float* out, int T, int H, float eps)
{
    for (int t = 0; t < T; ++t) {
        const float* row = x + int64_t(t) * H;
        float* dst = out + int64_t(t) * H;
        const float scale = 1.0f / std::sqrt(dotAvx2(row, row, H) / float(H) + eps);
        const __m256 sv = _mm256_set1_ps(scale);
        int i = 0;
        for (; i + 8 <= H; i += 8)
            _mm256_storeu_ps(dst + i,
                             _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(row + i), sv), _mm256_loadu_ps(weight + i)));
        for (; i < H; ++i) dst[i] = row[i] * scale * weight[i];
    }
}
BROOK_AVX2 void siluMulAvx2(const float* gateUp, float* out, int T, int I)
{
    for (int t = 0; t < T; ++t) {
        const float* gate = gateUp + int64_t(t) * 2 * I;
        const float* up = gate + I;
        float* dst = out + int64_t(t) * I;
        int i = 0;
        for (; i + 8 <= I; i += 8) {
            const __m256 g = _mm256_loadu_ps(gate + i);
            const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
            const __m256 s = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
            _mm256_storeu_ps(dst + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
        }
        for (; i < I; ++i) dst[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
    }
}

// ---- AVX-512 ------------------------------------------------------------------------------

BROOK_AVX512 inline __m512 exp16(__m512 x)
{
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(kExpLo)), _mm512_set1_ps(kExpHi));
    const __m512 n =
        _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
    __m512 p = _mm512_set1_ps(kP0);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);
}

BROOK_AVX512 float dotAvx512(const float* a, const float* b, int n)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    float s = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}
BROOK_AVX512 void scaleAvx512(float* y, float a, int n)
{
    const __m512 av = _mm512_set1_ps(a);
    int i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(av, _mm512_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] *= a;
}
BROOK_AVX512 float expShiftedAvx512(float* x, int n)
{
    __m512 maxv = _mm512_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 16 <= n; i += 16) maxv = _mm512_max_ps(maxv, _mm512_loadu_ps(x + i));
    const __mmask16 tail = __mmask16((1u << (n - i)) - 1);
    if (tail) maxv = _mm512_mask_max_ps(maxv, tail, maxv, _mm512_maskz_loadu_ps(tail, x + i));
    const __m512 mv = _mm512_set1_ps(_mm512_reduce_max_ps(maxv));
    __m512 sumv = _mm512_setzero_ps();
    for (i = 0; i + 16 <= n; i += 16) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), mv));
        _mm512_storeu_ps(x + i, e);
        sumv = _mm512_add_ps(sumv, e);
    }
    if (tail) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), mv));
        _mm512_mask_storeu_ps(x + i, tail, e);
        sumv = _mm512_mask_add_ps(sumv, tail, sumv, e);
    }
    return _mm512_reduce_add_ps(sumv);
}
BROOK_AVX512 void rmsnormAvx512(const float* x, const float* weight, float* out, int T, int H, float eps)
{
    for (int t = 0; t < T; ++t) {
        const float* row = x + int64_t(t) * H;
        float* dst = out + int64_t(t) * H;
        const float scale = 1.0f / std::sqrt(dotAvx512(row, row, H) / float(H) + eps);
        const __m512 sv = _mm512_set1_ps(scale);
        int i = 0;
        for (; i + 16 <= H; i += 16)
            _mm512_storeu_ps(dst + i,
                             _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(row + i), sv), _mm512_loadu_ps(weight + i)));
        for (; i < H; ++i) dst[i] = row[i] * scale * weight[i];
    }
}
BROOK_AVX512 void siluMulAvx512(const float* gateUp, float* out, int T, int I)
{
    for (int t = 0; t < T; ++t) {
        const float* gate = gateUp + int64_t(t) * 2 * I;
        const float* up = gate + I;
        float* dst = out + int64_t(t) * I;
        int i = 0;
        for (; i + 16 <= I; i += 16) {
            const __m512 g = _mm512_loadu_ps(gate + i);
            const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
            const __m512 s = _mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
            _mm512_storeu_ps(dst + i, _mm512_mul_ps(s, _mm512_loadu_ps(up + i)));
        }
        for (; i < I; ++i) dst[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
    }
}

}  // namespace

const CpuVectorOps& CpuVectorOps::forIsa(CpuIsa isa)
{
    namespace tiles = attention_tiles;
    static const CpuVectorOps scalar{dotScalar, scaleScalar, cpu::rmsnorm, cpu::siluMul, tiles::scoresTileScalar,
                                     tiles::weightedRowsScalar, expShiftedScalar};
    static const CpuVectorOps avx2{dotAvx2, scaleAvx2, rmsnormAvx2, siluMulAvx2, tiles::scoresTileAvx2,
                                   tiles::weightedRowsAvx2, expShiftedAvx2};
    static const CpuVectorOps avx512{dotAvx512, scaleAvx512, rmsnormAvx512, siluMulAvx512, tiles::scoresTileAvx512,
                                     tiles::weightedRowsAvx512, expShiftedAvx512};
    switch (isa) {
    case CpuIsa::Scalar: return scalar;
    case CpuIsa::Avx2: return avx2;
    case CpuIsa::Avx512:
    case CpuIsa::Avx512Vnni:
    case CpuIsa::Avx512Bf16: return avx512;
    }
    return scalar;
}

}  // namespace brook::cpu
