// The sampler's passes on AVX2 (sampler_kernels_avx2.h), lane for lane the integer and single
// float operations of sampler_math.h. AVX2 lacks three things the AVX-512 versions lean on, and
// each is rebuilt exactly:
//   - float -> uint64 truncation (vcvttps2uqq): trunc(a * 2^32) for 0 < a < 87 is split into
//     whole, 16 and 16 fractional bits, each from float steps that are exact;
//   - int64 -> float conversion (vcvtqq2ps): the mantissa in [2^31, 2^32] is halved with its lost
//     bit kept as a sticky bit, converted as int32 (round to nearest even), and doubled;
//   - compress stores and mask registers: movemask bits, and scalar stores for the lanes kept.
// The 64-bit products use vpmuludq on the even and the odd 32-bit lanes separately.
#include "engine/cpu/sampler_kernels_avx2.h"

#include "engine/cpu/sampler_kernels.h"
#include "engine/cpu/sampler_kernels_scalar.h"
#include "engine/sampler_math.h"

#include <immintrin.h>

#define BROOK_AVX2 __attribute__((target("avx2,fma")))

namespace brook::cpu::sampler_avx2 {

using namespace sampler_scalar;

namespace {

// (a * b) >> 32 of the low 32 bits of each 64-bit lane.
BROOK_AVX2 inline __m256i mulHi(__m256i a, __m256i b) { return _mm256_srli_epi64(_mm256_mul_epu32(a, b), 32); }

// 8 x 32-bit lanes from the low halves of two vectors of 4 x 64-bit lanes: `even` gives lanes
// 0, 2, 4, 6 and `odd` lanes 1, 3, 5, 7 (the layout _mm256_srli_epi64(v, 32) split them from).
BROOK_AVX2 inline __m256i joinLanes(__m256i even, __m256i odd)
{
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// samplerProbBits on M groups of 8 floats, step for step (the M x 2 multiply chains advance
// together, as in the AVX-512 version).
template <int M>
BROOK_AVX2 inline void probBits(const __m256* x, __m256i* out)
{
    const __m256i kLog2eQ31 = _mm256_set1_epi64x(3098164009u);
    const __m256i lo32 = _mm256_set1_epi64x(0xFFFFFFFFll);
    const __m256 two16 = _mm256_set1_ps(65536.0f);
    __m256i whole[M][2], frac[M][2], q[M][2];
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
        // fixedX = trunc(-x * 2^32) = intPart * 2^32 + hi16 * 2^16 + lo16, for 0 < -x < 87 (other
        // lanes are replaced at the end). Every float step is exact: a float minus its integer
        // part, and products by 2^16 of values below 2^16.
        const __m256 a = _mm256_sub_ps(_mm256_setzero_ps(), x[m]);
        const __m256i intPart = _mm256_cvttps_epi32(a);
        const __m256 f16 = _mm256_mul_ps(_mm256_sub_ps(a, _mm256_cvtepi32_ps(intPart)), two16);
        const __m256i hi16 = _mm256_cvttps_epi32(f16);
        const __m256i lo16 = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_sub_ps(f16, _mm256_cvtepi32_ps(hi16)), two16));
        const __m256i low32 = _mm256_or_si256(_mm256_slli_epi32(hi16, 16), lo16);  // uint32(fixedX)
        const __m256i ints[2] = {intPart, _mm256_srli_epi64(intPart, 32)};
        const __m256i lows[2] = {low32, _mm256_srli_epi64(low32, 32)};
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const __m256i y = _mm256_add_epi64(_mm256_mul_epu32(ints[h], kLog2eQ31), mulHi(lows[h], kLog2eQ31));
            whole[m][h] = _mm256_srli_epi64(y, 31);
            frac[m][h] = _mm256_and_si256(_mm256_slli_epi64(y, 1), lo32);
            q[m][h] = _mm256_set1_epi64x(2);
        }
    }
    for (const uint32_t c :
         {30u, 437u, 5676u, 65510u, 661577u, 5726720u, 41309550u, 238388332u, 1031764991u, 2977044472u})
#pragma GCC unroll 4
        for (int m = 0; m < M; ++m)
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h) q[m][h] = _mm256_sub_epi64(_mm256_set1_epi64x(c), mulHi(frac[m][h], q[m][h]));
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
        __m256i mantissa[2];  // 2^-frac in 0.32, in [2^31, 2^32]
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h)
            mantissa[h] = _mm256_sub_epi64(_mm256_set1_epi64x(int64_t(1) << 32), mulHi(frac[m][h], q[m][h]));
        // Its low 32 bits (2^32 wraps to 0), and whether it is 2^32.
        const __m256i low = joinLanes(mantissa[0], mantissa[1]);
        const __m256i isTwo32 =
            joinLanes(_mm256_srli_epi64(mantissa[0], 32), _mm256_srli_epi64(mantissa[1], 32));  // 0 or 1
        // uint32 -> float, correctly rounded: the rounding point is 8 bits up, so halving with
        // the lost bit or'ed in as a sticky bit rounds the same, and the half fits an int32.
        const __m256i halved = _mm256_or_si256(_mm256_srli_epi32(low, 1), _mm256_and_si256(low, _mm256_set1_epi32(1)));
        __m256 rounded = _mm256_mul_ps(_mm256_cvtepi32_ps(halved), _mm256_set1_ps(2.0f));
        rounded = _mm256_blendv_ps(rounded, _mm256_set1_ps(4294967296.0f),
                                   _mm256_castsi256_ps(_mm256_cmpeq_epi32(isTwo32, _mm256_set1_epi32(1))));
        const __m256i exponentDrop =
            _mm256_slli_epi32(_mm256_add_epi32(joinLanes(whole[m][0], whole[m][1]), _mm256_set1_epi32(32)), 23);
        const __m256 bits = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_castps_si256(rounded), exponentDrop));
        // The two early returns of the scalar code: !(x > -87) -> 0 (also NaN), !(x < 0) -> 1.0f.
        const __m256 live = _mm256_cmp_ps(x[m], _mm256_set1_ps(-87.0f), _CMP_GT_OQ);
        const __m256 negative = _mm256_cmp_ps(x[m], _mm256_setzero_ps(), _CMP_LT_OQ);
        const __m256 value = _mm256_blendv_ps(_mm256_set1_ps(1.0f), bits, negative);
        out[m] = _mm256_castps_si256(_mm256_and_ps(value, live));
    }
}

// samplerWeight on the 4 probabilities in the low halves of p64's lanes.
BROOK_AVX2 inline __m256i weights4(__m256i p64, int shift)
{
    const __m256i exponent = _mm256_srli_epi64(p64, 23);
    const __m256i mantissa =
        _mm256_or_si256(_mm256_and_si256(p64, _mm256_set1_epi64x(0x7FFFFF)), _mm256_set1_epi64x(0x800000));
    const __m256i scale = _mm256_add_epi64(exponent, _mm256_set1_epi64x(shift - 127 - 23));
    // Shift counts of 64 or more (a negative count is one) give 0, as the scalar `scale > -64`.
    const __m256i left = _mm256_sllv_epi64(mantissa, scale);
    const __m256i right = _mm256_srlv_epi64(mantissa, _mm256_sub_epi64(_mm256_setzero_si256(), scale));
    const __m256i nonNegative = _mm256_cmpgt_epi64(scale, _mm256_set1_epi64x(-1));
    const __m256i w = _mm256_blendv_epi8(right, left, nonNegative);
    return _mm256_andnot_si256(_mm256_cmpeq_epi64(exponent, _mm256_setzero_si256()), w);
}

// The weights of 8 probabilities: lanes 0-3 in w[0], 4-7 in w[1].
BROOK_AVX2 inline void weights8(__m256i p, int shift, __m256i* w)
{
    w[0] = weights4(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(p)), shift);
    w[1] = weights4(_mm256_cvtepu32_epi64(_mm256_extracti128_si256(p, 1)), shift);
}

// A 32-bit lane mask (all ones or zero) widened to the 64-bit lanes of weights8's halves.
BROOK_AVX2 inline void widenMask(__m256i mask32, __m256i* mask64)
{
    mask64[0] = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(mask32));
    mask64[1] = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(mask32, 1));
}

BROOK_AVX2 inline uint64_t horizontalSum(__m256i v)
{
    const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return uint64_t(_mm_cvtsi128_si64(s)) + uint64_t(_mm_extract_epi64(s, 1));
}

// p >= minV, unsigned, per 32-bit lane.
BROOK_AVX2 inline __m256i atLeast(__m256i p, __m256i minV) { return _mm256_cmpeq_epi32(_mm256_max_epu32(p, minV), p); }

BROOK_AVX2 inline int laneBits(__m256i mask32) { return _mm256_movemask_ps(_mm256_castsi256_ps(mask32)); }

inline uint64_t makeKey(uint32_t p, size_t i) { return (uint64_t(p) << 32) | uint32_t(~uint32_t(i)); }

}  // namespace

BROOK_AVX2 void probRow(const float* logits, size_t V, float temperature, float maxScaled, uint32_t* probs)
{
    constexpr int kGroups = 2;
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
    probRowScalar(logits + i, V - i, temperature, maxScaled, probs + i);
}

BROOK_AVX2 size_t buildKeys(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* keys,
                            uint64_t* mass)
{
    size_t count = 0;
    __m256i total = _mm256_setzero_si256();
    const __m256i minV = _mm256_set1_epi32(int(minBits));
    size_t i = 0;
    for (; i + 8 <= V; i += 8) {
        const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(probs + i));
        __m256i w[2];
        weights8(p, shift, w);
        total = _mm256_add_epi64(total, _mm256_add_epi64(w[0], w[1]));  // below minBits the weight is 0
        const int keep = laneBits(atLeast(p, minV));
        for (int bits = keep; bits; bits &= bits - 1) {
            const int lane = __builtin_ctz(uint32_t(bits));
            keys[count++] = makeKey(probs[i + size_t(lane)], i + size_t(lane));
        }
    }
    uint64_t tailMass = 0;
    const size_t tail = buildKeysScalar(probs + i, V - i, minBits, shift, keys + count, &tailMass);
    rebaseKeys(keys + count, tail, i);
    *mass = horizontalSum(total) + tailMass;
    return count + tail;
}

BROOK_AVX2 uint64_t bucketMasses(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* masses,
                                 size_t* candidates)
{
    const __m256i minV = _mm256_set1_epi32(int(minBits));
    const __m256i baseV = _mm256_set1_epi32(int(minBits >> kProbBucketShift));
    const __m256i lastV = _mm256_set1_epi32(int(probBucketCount(minBits) - 1));
    __m256i total = _mm256_setzero_si256();
    size_t count = 0;
    alignas(32) uint64_t w[8];
    alignas(32) uint32_t bucket[8];
    size_t i = 0;
    for (; i + 8 <= V; i += 8) {
        const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(probs + i));
        const __m256i keep = atLeast(p, minV);
        const int keepBits = laneBits(keep);
        if (!keepBits) continue;
        __m256i weight[2], keep64[2];
        weights8(p, shift, weight);
        widenMask(keep, keep64);
        weight[0] = _mm256_and_si256(weight[0], keep64[0]);
        weight[1] = _mm256_and_si256(weight[1], keep64[1]);
        total = _mm256_add_epi64(total, _mm256_add_epi64(weight[0], weight[1]));
        count += size_t(__builtin_popcount(uint32_t(keepBits)));
        if (!masses) continue;
        // The histogram adds are scalar (AVX2 has no scatter), as on AVX-512.
        const __m256i b = _mm256_min_epu32(_mm256_sub_epi32(_mm256_srli_epi32(p, kProbBucketShift), baseV), lastV);
        _mm256_store_si256(reinterpret_cast<__m256i*>(w), weight[0]);
        _mm256_store_si256(reinterpret_cast<__m256i*>(w + 4), weight[1]);
        _mm256_store_si256(reinterpret_cast<__m256i*>(bucket), b);
        for (int bits = keepBits; bits; bits &= bits - 1) {
            const int lane = __builtin_ctz(uint32_t(bits));
            masses[bucket[lane]] += w[lane];
        }
    }
    size_t tailCount = 0;
    const uint64_t tail = bucketMassesScalar(probs + i, V - i, minBits, shift, masses, &tailCount);
    *candidates = count + tailCount;
    return horizontalSum(total) + tail;
}

BROOK_AVX2 size_t keysInBucket(const uint32_t* probs, size_t V, uint32_t bucketBits, uint64_t* keys)
{
    size_t count = 0;
    const __m256i bucketV = _mm256_set1_epi32(int(bucketBits));
    size_t i = 0;
    for (; i + 8 <= V; i += 8) {
        const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(probs + i));
        const int in = laneBits(_mm256_cmpeq_epi32(_mm256_srli_epi32(p, kProbBucketShift), bucketV));
        for (int bits = in; bits; bits &= bits - 1) {
            const int lane = __builtin_ctz(uint32_t(bits));
            keys[count++] = makeKey(probs[i + size_t(lane)], i + size_t(lane));
        }
    }
    const size_t tail = keysInBucketScalar(probs + i, V - i, bucketBits, keys + count);
    rebaseKeys(keys + count, tail, i);
    return count + tail;
}

BROOK_AVX2 float maxValue(const float* values, size_t n)
{
    __m256 m = _mm256_set1_ps(-INFINITY);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(values + i);
        m = _mm256_blendv_ps(m, v, _mm256_cmp_ps(v, m, _CMP_GT_OQ));  // NaN compares false
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m);
    const float tail = maxScalar(values + i, n - i);
    const float head = maxScalar(lanes, 8);
    return tail > head ? tail : head;
}

BROOK_AVX2 int32_t drawIndex(const uint32_t* probs, size_t V, uint32_t minBits, uint64_t floor, int shift,
                             double target)
{
    uint64_t cumulative = 0;
    int32_t last = 0;  // the highest kept index so far (some token is always kept)
    const __m256i minV = _mm256_set1_epi32(int(minBits));
    // Unsigned 64-bit order as signed order after flipping the top bit.
    const __m256i signBit = _mm256_set1_epi64x(int64_t(0x8000000000000000ull));
    const __m256i floorSigned = _mm256_xor_si256(_mm256_set1_epi64x(int64_t(floor)), signBit);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    size_t i = 0;
    for (; i + 8 <= V; i += 8) {
        const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(probs + i));
        const __m256i kept32 = atLeast(p, minV);
        if (!laneBits(kept32)) continue;
        const __m256i notIndex =
            _mm256_xor_si256(_mm256_add_epi32(lane, _mm256_set1_epi32(int(i))), _mm256_set1_epi32(-1));
        __m256i kept64[2], w[2];
        widenMask(kept32, kept64);
        weights8(p, shift, w);
        const __m128i halvesP[2] = {_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)};
        const __m128i halvesN[2] = {_mm256_castsi256_si128(notIndex), _mm256_extracti128_si256(notIndex, 1)};
        int keptBits = 0;
        __m256i chunk = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            const __m256i key = _mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(halvesP[h]), 32),
                                                _mm256_cvtepu32_epi64(halvesN[h]));
            // key >= floor: not (floor > key).
            const __m256i below = _mm256_cmpgt_epi64(floorSigned, _mm256_xor_si256(key, signBit));
            const __m256i keep = _mm256_andnot_si256(below, kept64[h]);
            chunk = _mm256_add_epi64(chunk, _mm256_and_si256(w[h], keep));
            keptBits |= _mm256_movemask_pd(_mm256_castsi256_pd(keep)) << (4 * h);
        }
        if (!keptBits) continue;
        const uint64_t mass = horizontalSum(chunk);
        if (double(cumulative + mass) > target) {  // the crossing is in these 8: walk them one by one
            const int32_t token = drawScalar(probs, i, i + 8, minBits, floor, shift, target, cumulative, last);
            if (token >= 0) return token;
            continue;  // unreachable: double() is monotone, so the scalar walk crosses too
        }
        cumulative += mass;
        last = int32_t(i) + 31 - __builtin_clz(uint32_t(keptBits));
    }
    const int32_t token = drawScalar(probs, i, V, minBits, floor, shift, target, cumulative, last);
    return token >= 0 ? token : last;
}

}  // namespace brook::cpu::sampler_avx2
