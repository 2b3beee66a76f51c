#include "engine/cpu/sampler_kernels.h"

#include "engine/cpu/sampler_kernels_avx2.h"
#include "engine/cpu/sampler_kernels_scalar.h"
#include "engine/sampler_math.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized and -Wuninitialized (inside
// _mm512_reduce_add_epi64) in target-attribute functions: known false positives.
#if defined(__GNUC__) && !defined(__clang__)  // a GCC warning: clang has no such group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"

#define BROOK_AVX512DQ __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))

namespace brook::cpu {

using namespace sampler_scalar;

namespace {

bool cpuHasDq()
{
    static const bool dq = __builtin_cpu_supports("avx512dq");
    return dq;
}

// One term of samplerProbBits' series: c - mulHi32(frac, q), per 64-bit lane.
BROOK_AVX512DQ inline __m512i seriesStep(uint32_t c, __m512i frac, __m512i q)
{
    return _mm512_sub_epi64(_mm512_set1_epi64(c), _mm512_srli_epi64(_mm512_mul_epu32(frac, q), 32));
}

// samplerProbBits on M x 8 lanes of 64 bits (x[m] as 8 floats), step for step. The series is a
// chain of ten dependent multiplies; M independent groups advance together, each step for all of
// them, so the core always has M multiplies to issue instead of waiting on one chain (one group
// per call left probRow at ~37 cycles per 8 tokens).
template <int M>
BROOK_AVX512DQ inline void probBits(const __m256* x, __m256i* out)
{
    const __m512i kLog2eQ31 = _mm512_set1_epi64(3098164009u);
    const __m512i lo32 = _mm512_set1_epi64(0xFFFFFFFFu);
    __m512i whole[M], frac[M], q[M];
    for (int m = 0; m < M; ++m) {
        // -x * 2^32, truncated to uint64 (only lanes with -87 < x < 0 are used).
        const __m512i fixedX =
            _mm512_cvttps_epu64(_mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), x[m]), _mm256_set1_ps(4294967296.0f)));
        const __m512i y = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(fixedX, 32), kLog2eQ31),
                                           _mm512_srli_epi64(_mm512_mul_epu32(fixedX, kLog2eQ31), 32));
        whole[m] = _mm512_srli_epi64(y, 31);
        frac[m] = _mm512_and_si512(_mm512_slli_epi64(y, 1), lo32);
        q[m] = _mm512_set1_epi64(2);
    }
    for (const uint32_t c :
         {30u, 437u, 5676u, 65510u, 661577u, 5726720u, 41309550u, 238388332u, 1031764991u, 2977044472u})
        for (int m = 0; m < M; ++m) q[m] = seriesStep(c, frac[m], q[m]);
    for (int m = 0; m < M; ++m) {
        const __m512i mantissa = _mm512_sub_epi64(_mm512_set1_epi64(int64_t(1) << 32),
                                                  _mm512_srli_epi64(_mm512_mul_epu32(frac[m], q[m]), 32));
        const __m256 rounded = _mm512_cvtepi64_ps(mantissa);  // round to nearest even, as the scalar cast
        const __m256i exponentDrop =
            _mm512_cvtepi64_epi32(_mm512_slli_epi64(_mm512_add_epi64(whole[m], _mm512_set1_epi64(32)), 23));
        __m256i bits = _mm256_sub_epi32(_mm256_castps_si256(rounded), exponentDrop);
        // The two early returns of the scalar code: !(x > -87) -> 0 (also NaN), !(x < 0) -> 1.0f.
        const __mmask8 live = _mm256_cmp_ps_mask(x[m], _mm256_set1_ps(-87.0f), _CMP_GT_OQ);
        const __mmask8 negative = _mm256_cmp_ps_mask(x[m], _mm256_setzero_ps(), _CMP_LT_OQ);
        bits = _mm256_mask_mov_epi32(_mm256_set1_epi32(0x3F800000), negative, bits);
        out[m] = _mm256_maskz_mov_epi32(live, bits);
    }
}

BROOK_AVX512DQ void probRowAvx512(const float* logits, size_t V, float temperature, float maxScaled, uint32_t* probs)
{
    constexpr int kGroups = 4;
    const __m256 t = _mm256_set1_ps(temperature), m = _mm256_set1_ps(maxScaled);
    size_t i = 0;
    for (; i + 8 * kGroups <= V; i += 8 * kGroups) {
        __m256 x[kGroups];
        __m256i bits[kGroups];
        for (int g = 0; g < kGroups; ++g)
            x[g] = _mm256_sub_ps(_mm256_div_ps(_mm256_loadu_ps(logits + i + 8 * g), t), m);
        probBits<kGroups>(x, bits);
        for (int g = 0; g < kGroups; ++g) _mm256_storeu_si256(reinterpret_cast<__m256i*>(probs + i + 8 * g), bits[g]);
    }
    for (; i + 8 <= V; i += 8) {
        const __m256 x = _mm256_sub_ps(_mm256_div_ps(_mm256_loadu_ps(logits + i), t), m);
        __m256i bits;
        probBits<1>(&x, &bits);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(probs + i), bits);
    }
    probRowScalar(logits + i, V - i, temperature, maxScaled, probs + i);
}

// samplerWeight on 8 lanes: floor(mantissa * 2^(exponent - 150 + shift)), 0 for a zero exponent.
BROOK_AVX512DQ inline __m512i weights8(__m256i p, int shift)
{
    const __m512i p64 = _mm512_cvtepu32_epi64(p);
    const __m512i exponent = _mm512_srli_epi64(p64, 23);
    const __m512i mantissa =
        _mm512_or_si512(_mm512_and_si512(p64, _mm512_set1_epi64(0x7FFFFF)), _mm512_set1_epi64(0x800000));
    const __m512i scale = _mm512_add_epi64(exponent, _mm512_set1_epi64(shift - 127 - 23));
    // Shifts of 64 or more give 0 in sllv / srlv, as the scalar code's `scale > -64 ? ... : 0`.
    const __m512i left = _mm512_sllv_epi64(mantissa, scale);
    const __m512i right = _mm512_srlv_epi64(mantissa, _mm512_sub_epi64(_mm512_setzero_si512(), scale));
    const __mmask8 nonNegative = _mm512_cmpge_epi64_mask(scale, _mm512_setzero_si512());
    const __m512i w = _mm512_mask_mov_epi64(right, nonNegative, left);
    return _mm512_maskz_mov_epi64(_mm512_cmpneq_epi64_mask(exponent, _mm512_setzero_si512()), w);
}

// The keys (as makeKey orders them) of the lanes of p in `mask`, tokens i..i + 7, compressed to
// dst in index order; returns how many.
BROOK_AVX512DQ inline size_t compressKeys8(__m256i p, size_t i, __mmask8 mask, uint64_t* dst)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i notIndex = _mm256_xor_si256(_mm256_add_epi32(lane, _mm256_set1_epi32(int(i))), _mm256_set1_epi32(-1));
    const __m512i key =
        _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtepu32_epi64(p), 32), _mm512_cvtepu32_epi64(notIndex));
    _mm512_mask_compressstoreu_epi64(dst, mask, key);
    return size_t(__builtin_popcount(mask));
}

BROOK_AVX512DQ size_t buildKeysAvx512(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* keys,
                                      uint64_t* mass)
{
    size_t count = 0;
    __m512i total = _mm512_setzero_si512();
    const __m256i minV = _mm256_set1_epi32(int(minBits));
    size_t i = 0;
    for (; i + 8 <= V; i += 8) {
        const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(probs + i));
        const __mmask8 keep = _mm256_cmpge_epu32_mask(p, minV);
        if (keep) count += compressKeys8(p, i, keep, keys + count);
        total = _mm512_add_epi64(total, weights8(p, shift));
    }
    uint64_t tailMass = 0;
    const size_t tail = buildKeysScalar(probs + i, V - i, minBits, shift, keys + count, &tailMass);
    rebaseKeys(keys + count, tail, i);
    *mass = uint64_t(_mm512_reduce_add_epi64(total)) + tailMass;
    return count + tail;
}

// One pass: weights and bucket numbers 8 lanes at a time in vectors, the histogram adds scalar
// (a scatter-add has no fast form here). Lanes below minBits add weight 0 to bucket 0.
template <bool kHistogram>
BROOK_AVX512DQ uint64_t bucketMassesAvx512(const uint32_t* probs, size_t V, uint32_t minBits, int shift,
                                           uint64_t* masses, size_t* candidates)
{
    const __m256i minV = _mm256_set1_epi32(int(minBits));
    const __m256i baseV = _mm256_set1_epi32(int(minBits >> kProbBucketShift));
    const __m256i lastV = _mm256_set1_epi32(int(probBucketCount(minBits) - 1));
    __m512i total = _mm512_setzero_si512();
    size_t count = 0;
    alignas(64) uint64_t w[8];
    alignas(32) uint32_t bucket[8];
    size_t i = 0;
    for (; i + 8 <= V; i += 8) {
        const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(probs + i));
        const __mmask8 keep = _mm256_cmpge_epu32_mask(p, minV);
        const __m512i weight = _mm512_maskz_mov_epi64(keep, weights8(p, shift));
        total = _mm512_add_epi64(total, weight);
        count += size_t(__builtin_popcount(keep));
        if constexpr (kHistogram) {
            if (!keep) continue;
            const __m256i b =
                _mm256_maskz_min_epu32(keep, _mm256_sub_epi32(_mm256_srli_epi32(p, kProbBucketShift), baseV), lastV);
            _mm512_store_si512(w, weight);
            _mm256_store_si256(reinterpret_cast<__m256i*>(bucket), b);
            for (int lane = 0; lane < 8; ++lane) masses[bucket[lane]] += w[lane];
        }
    }
    size_t tailCount = 0;
    const uint64_t tail = bucketMassesScalar(probs + i, V - i, minBits, shift, masses, &tailCount);
    *candidates = count + tailCount;
    return uint64_t(_mm512_reduce_add_epi64(total)) + tail;
}

BROOK_AVX512DQ size_t keysInBucketAvx512(const uint32_t* probs, size_t V, uint32_t bucketBits, uint64_t* keys)
{
    size_t count = 0;
    const __m256i bucketV = _mm256_set1_epi32(int(bucketBits));
    size_t i = 0;
    for (; i + 8 <= V; i += 8) {
        const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(probs + i));
        const __mmask8 in = _mm256_cmpeq_epi32_mask(_mm256_srli_epi32(p, kProbBucketShift), bucketV);
        if (in) count += compressKeys8(p, i, in, keys + count);
    }
    const size_t tail = keysInBucketScalar(probs + i, V - i, bucketBits, keys + count);
    rebaseKeys(keys + count, tail, i);
    return count + tail;
}

BROOK_AVX512DQ int32_t drawAvx512(const uint32_t* probs, size_t V, uint32_t minBits, uint64_t floor, int shift,
                                  double target)
{
    uint64_t cumulative = 0;
    int32_t last = 0;  // the highest kept index so far (some token is always kept)
    const __m256i minV = _mm256_set1_epi32(int(minBits));
    const __m512i floorV = _mm512_set1_epi64(int64_t(floor));
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    size_t i = 0;
    for (; i + 8 <= V; i += 8) {
        const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(probs + i));
        __mmask8 kept = _mm256_cmpge_epu32_mask(p, minV);
        if (!kept) continue;
        const __m256i notIndex =
            _mm256_xor_si256(_mm256_add_epi32(lane, _mm256_set1_epi32(int(i))), _mm256_set1_epi32(-1));
        const __m512i key =
            _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtepu32_epi64(p), 32), _mm512_cvtepu32_epi64(notIndex));
        kept &= _mm512_cmpge_epu64_mask(key, floorV);
        if (!kept) continue;
        const uint64_t chunk = uint64_t(_mm512_reduce_add_epi64(_mm512_maskz_mov_epi64(kept, weights8(p, shift))));
        if (double(cumulative + chunk) > target) {  // the crossing is in these 8: walk them one by one
            const int32_t token = drawScalar(probs, i, i + 8, minBits, floor, shift, target, cumulative, last);
            if (token >= 0) return token;
            continue;  // unreachable: double() is monotone, so the scalar walk crosses too
        }
        cumulative += chunk;
        last = int32_t(i) + 31 - __builtin_clz(uint32_t(kept));
    }
    const int32_t token = drawScalar(probs, i, V, minBits, floor, shift, target, cumulative, last);
    return token >= 0 ? token : last;
}

BROOK_AVX512DQ float maxAvx512(const float* values, size_t n)
{
    __m512 m = _mm512_set1_ps(-INFINITY);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(values + i);
        m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ), v);  // NaN compares false
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, m);
    const float tail = maxScalar(values + i, n - i);
    const float head = maxScalar(lanes, 16);
    return tail > head ? tail : head;
}

}  // namespace

// Which kernels a call runs: AVX-512 (with DQ's 64-bit conversions), else AVX2, else scalar.
enum class SamplerPath { Scalar, Avx2, Avx512 };

SamplerPath samplerPath(CpuIsa isa)
{
    if (isa >= CpuIsa::Avx512 && cpuHasDq()) return SamplerPath::Avx512;
    return isa >= CpuIsa::Avx2 ? SamplerPath::Avx2 : SamplerPath::Scalar;
}

float maxValue(const float* values, size_t n, CpuIsa isa)
{
    switch (samplerPath(isa)) {
    case SamplerPath::Avx512: return maxAvx512(values, n);
    case SamplerPath::Avx2: return sampler_avx2::maxValue(values, n);
    case SamplerPath::Scalar: break;
    }
    return maxScalar(values, n);
}

int32_t drawIndex(const uint32_t* probs, size_t V, uint32_t minBits, uint64_t floor, int shift, double target,
                  CpuIsa isa)
{
    switch (samplerPath(isa)) {
    case SamplerPath::Avx512: return drawAvx512(probs, V, minBits, floor, shift, target);
    case SamplerPath::Avx2: return sampler_avx2::drawIndex(probs, V, minBits, floor, shift, target);
    case SamplerPath::Scalar: break;
    }
    uint64_t cumulative = 0;
    int32_t last = 0;
    const int32_t token = drawScalar(probs, 0, V, minBits, floor, shift, target, cumulative, last);
    return token >= 0 ? token : last;
}

uint64_t bucketMasses(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* masses,
                      size_t* candidates, CpuIsa isa)
{
    switch (samplerPath(isa)) {
    case SamplerPath::Avx512:
        return masses ? bucketMassesAvx512<true>(probs, V, minBits, shift, masses, candidates)
                      : bucketMassesAvx512<false>(probs, V, minBits, shift, masses, candidates);
    case SamplerPath::Avx2: return sampler_avx2::bucketMasses(probs, V, minBits, shift, masses, candidates);
    case SamplerPath::Scalar: break;
    }
    return bucketMassesScalar(probs, V, minBits, shift, masses, candidates);
}

size_t keysInBucket(const uint32_t* probs, size_t V, uint32_t bucketBits, uint64_t* keys, CpuIsa isa)
{
    switch (samplerPath(isa)) {
    case SamplerPath::Avx512: return keysInBucketAvx512(probs, V, bucketBits, keys);
    case SamplerPath::Avx2: return sampler_avx2::keysInBucket(probs, V, bucketBits, keys);
    case SamplerPath::Scalar: break;
    }
    return keysInBucketScalar(probs, V, bucketBits, keys);
}

bool samplerKernelsVectorized(CpuIsa isa) { return samplerPath(isa) != SamplerPath::Scalar; }

void probRow(const float* logits, size_t V, float temperature, float maxScaled, uint32_t* probs, CpuIsa isa)
{
    switch (samplerPath(isa)) {
    case SamplerPath::Avx512: probRowAvx512(logits, V, temperature, maxScaled, probs); return;
    case SamplerPath::Avx2: sampler_avx2::probRow(logits, V, temperature, maxScaled, probs); return;
    case SamplerPath::Scalar: break;
    }
    probRowScalar(logits, V, temperature, maxScaled, probs);
}

size_t buildKeys(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* keys, uint64_t* mass,
                 CpuIsa isa)
{
    switch (samplerPath(isa)) {
    case SamplerPath::Avx512: return buildKeysAvx512(probs, V, minBits, shift, keys, mass);
    case SamplerPath::Avx2: return sampler_avx2::buildKeys(probs, V, minBits, shift, keys, mass);
    case SamplerPath::Scalar: break;
    }
    return buildKeysScalar(probs, V, minBits, shift, keys, mass);
}

}  // namespace brook::cpu
