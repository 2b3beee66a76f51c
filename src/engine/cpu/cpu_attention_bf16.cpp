#include "engine/cpu/cpu_attention_bf16.h"

#include <immintrin.h>

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized in target-attribute functions: a known
// false positive (see cpu_vector_ops.cpp).
#if defined(__GNUC__) && !defined(__clang__)  // a GCC warning: clang has no such group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define BROOK_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma")))

namespace brook::cpu::attention_bf16 {

namespace {

// Lanes 0..count-1 of 16 (count may exceed 16).
inline __mmask16 firstLanes(int count) { return count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1); }

// 16 pairs (lo[i], hi[i]): cvtne2ps puts its second operand's 16 bf16 in the low words and its
// first's in the high words; the permutation interleaves them, word 2i from lo and 2i + 1 from hi.
BROOK_AVX512BF16 inline __m512i interleavedPairs(__m512 lo, __m512 hi)
{
    const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                           21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    return _mm512_permutexvar_epi16(order, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
}

// R heads' scores for 16 keys at a time: one load of the tile's pairs feeds R vdpbf16ps.
template <int R>
BROOK_AVX512BF16 void scoresPairsRun(const uint32_t* qp, int64_t qpStride, const uint32_t* kp, int bs, int count,
                                     int pairs, float scale, float* out, int64_t outStride)
{
    for (int j0 = 0; j0 < count; j0 += 16) {
        const __mmask16 m = firstLanes(count - j0);
        __m512 acc[R];
        for (int h = 0; h < R; ++h) acc[h] = _mm512_setzero_ps();
        for (int p = 0; p < pairs; ++p) {
            __m512i k = _mm512_maskz_loadu_epi32(m, kp + int64_t(p) * bs + j0);
            asm("" : "+v"(k));  // one load for R instructions (see cpu_attention_tiles.cpp)
            for (int h = 0; h < R; ++h)
                acc[h] = _mm512_dpbf16_ps(acc[h], (__m512bh)k, (__m512bh)_mm512_set1_epi32(int(qp[h * qpStride + p])));
        }
        const __m512 sv = _mm512_set1_ps(scale);
        for (int h = 0; h < R; ++h) _mm512_mask_storeu_ps(out + h * outStride + j0, m, _mm512_mul_ps(acc[h], sv));
    }
}

// R heads' y over VC vectors of 16 floats (from float `offset`) in registers across the pair rows.
template <int VC, int R>
BROOK_AVX512BF16 void weightedPairsRegs(float* y, int64_t yStride, const uint32_t* wp, int64_t wpStride,
                                        const uint32_t* vp, int pairRows, int n, int offset)
{
    __m512 acc[R][VC];
    for (int h = 0; h < R; ++h)
        for (int v = 0; v < VC; ++v) acc[h][v] = _mm512_loadu_ps(y + h * yStride + offset + 16 * v);
    for (int r = 0; r < pairRows; ++r) {
        __m512i wr[R];
        for (int h = 0; h < R; ++h) wr[h] = _mm512_set1_epi32(int(wp[h * wpStride + r]));
        for (int v = 0; v < VC; ++v) {
            __m512i x = _mm512_loadu_si512(vp + int64_t(r) * n + offset + 16 * v);
            asm("" : "+v"(x));
            for (int h = 0; h < R; ++h) acc[h][v] = _mm512_dpbf16_ps(acc[h][v], (__m512bh)x, (__m512bh)wr[h]);
        }
    }
    for (int h = 0; h < R; ++h)
        for (int v = 0; v < VC; ++v) _mm512_storeu_ps(y + h * yStride + offset + 16 * v, acc[h][v]);
}

// R heads over all n: 64 floats at a time (R = 4: 16 accumulators), then 16 at a time.
template <int R>
BROOK_AVX512BF16 void weightedPairsHeads(float* y, int64_t yStride, const uint32_t* wp, int64_t wpStride,
                                         const uint32_t* vp, int pairRows, int n)
{
    int offset = 0;
    for (; offset + 64 <= n; offset += 64) weightedPairsRegs<4, R>(y, yStride, wp, wpStride, vp, pairRows, n, offset);
    for (; offset < n; offset += 16) weightedPairsRegs<1, R>(y, yStride, wp, wpStride, vp, pairRows, n, offset);
}

}  // namespace

BROOK_AVX512BF16 void keyTilePairs(const float* kt, int blockSize, int count, int n, uint32_t* out)
{
    for (int p = 0; p < n / 2; ++p) {
        const float* even = kt + int64_t(2 * p) * blockSize;
        const float* odd = even + blockSize;
        for (int j0 = 0; j0 < blockSize; j0 += 16) {
            const __mmask16 written = firstLanes(count - j0 > 0 ? count - j0 : 0);
            const __m512i v =
                interleavedPairs(_mm512_maskz_loadu_ps(written, even + j0), _mm512_maskz_loadu_ps(written, odd + j0));
            _mm512_mask_storeu_epi32(out + int64_t(p) * blockSize + j0, firstLanes(blockSize - j0), v);
        }
    }
}

BROOK_AVX512BF16 void valueRowPairs(const float* rows, int64_t stride, int blockSize, int count, int n, uint32_t* out)
{
    for (int r = 0; r < blockSize / 2; ++r) {
        const bool evenWritten = 2 * r < count, oddWritten = 2 * r + 1 < count;
        const float* even = rows + int64_t(2 * r) * stride;
        const float* odd = even + stride;
        for (int i = 0; i < n; i += 16) {
            const __m512 lo = evenWritten ? _mm512_loadu_ps(even + i) : _mm512_setzero_ps();
            const __m512 hi = oddWritten ? _mm512_loadu_ps(odd + i) : _mm512_setzero_ps();
            _mm512_storeu_si512(out + int64_t(r) * n + i, interleavedPairs(lo, hi));
        }
    }
}

BROOK_AVX512BF16 void scoresPairs(const uint32_t* qp, int heads, int64_t qpStride, const uint32_t* kp, int blockSize,
                                  int count, int pairs, float scale, float* out, int64_t outStride)
{
    int h = 0;
    for (; h + 8 <= heads; h += 8)
        scoresPairsRun<8>(qp + h * qpStride, qpStride, kp, blockSize, count, pairs, scale, out + h * outStride,
                          outStride);
    for (; h < heads; ++h)
        scoresPairsRun<1>(qp + h * qpStride, qpStride, kp, blockSize, count, pairs, scale, out + h * outStride,
                          outStride);
}

BROOK_AVX512BF16 void weightedPairs(float* y, int heads, int64_t yStride, const uint32_t* wp, int64_t wpStride,
                                    const uint32_t* vp, int pairRows, int n)
{
    int h = 0;
    for (; h + 4 <= heads; h += 4)
        weightedPairsHeads<4>(y + h * yStride, yStride, wp + h * wpStride, wpStride, vp, pairRows, n);
    for (; h < heads; ++h)
        weightedPairsHeads<1>(y + h * yStride, yStride, wp + h * wpStride, wpStride, vp, pairRows, n);
}

}  // namespace brook::cpu::attention_bf16
