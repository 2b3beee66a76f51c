#include "engine/cpu/cpu_attention_tiles.h"

#include <immintrin.h>

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized in target-attribute functions: a known
// false positive (see cpu_vector_ops.cpp).
#if defined(__GNUC__) && !defined(__clang__)  // a GCC warning: clang has no such group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define BROOK_AVX2 __attribute__((target("avx2,fma")))
#define BROOK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

namespace brook::cpu::attention_tiles {

namespace {

// Calls body.template operator()<R>(h0) for heads h0.. in runs of 8, then 4, 2 and 1: as many
// accumulators as the path's registers hold, the remainder in smaller runs.
template <typename Body>
void inRuns(int heads, const Body& body)
{
    int h = 0;
    for (; h + 8 <= heads; h += 8) body.template operator()<8>(h);
    if (h + 4 <= heads) body.template operator()<4>(h), h += 4;
    if (h + 2 <= heads) body.template operator()<2>(h), h += 2;
    if (h < heads) body.template operator()<1>(h);
}

// ---- AVX2: 8 keys a vector --------------------------------------------------------------------

template <int R>
BROOK_AVX2 void scoresRun8(const float* q, int64_t qStride, const float* kt, int bs, int count, int n, float scale,
                           float* out, int64_t outStride)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int j0 = 0; j0 < count; j0 += 8) {
        // Lanes past `count` read as 0: a block's unwritten slots may hold anything.
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(count - j0), lane);
        __m256 acc[R];
        for (int h = 0; h < R; ++h) acc[h] = _mm256_setzero_ps();
        for (int d = 0; d < n; ++d) {
            const __m256 kd = _mm256_maskload_ps(kt + int64_t(d) * bs + j0, mask);
            for (int h = 0; h < R; ++h) acc[h] = _mm256_fmadd_ps(_mm256_set1_ps(q[h * qStride + d]), kd, acc[h]);
        }
        const __m256 sv = _mm256_set1_ps(scale);
        for (int h = 0; h < R; ++h) _mm256_maskstore_ps(out + h * outStride + j0, mask, _mm256_mul_ps(acc[h], sv));
    }
}

// R heads' y over VC vectors of 8 floats (from float `offset`) in registers across the rows, as
// weightedRowsRegs below does with 16: the same fma per element, in row order.
template <int VC, int R>
BROOK_AVX2 void weightedRowsRegs8(float* y, int64_t yStride, const float* w, int64_t wStride, const float* rows,
                                  int64_t stride, int count, int offset)
{
    __m256 acc[R][VC];
    for (int h = 0; h < R; ++h)
        for (int v = 0; v < VC; ++v) acc[h][v] = _mm256_loadu_ps(y + h * yStride + offset + 8 * v);
    for (int r = 0; r < count; ++r) {
        __m256 wr[R];
        for (int h = 0; h < R; ++h) wr[h] = _mm256_set1_ps(w[h * wStride + r]);
        for (int v = 0; v < VC; ++v) {
            __m256 x = _mm256_loadu_ps(rows + r * stride + offset + 8 * v);
            asm("" : "+x"(x));  // one load for R fmas
            for (int h = 0; h < R; ++h) acc[h][v] = _mm256_fmadd_ps(wr[h], x, acc[h][v]);
        }
    }
    for (int h = 0; h < R; ++h)
        for (int v = 0; v < VC; ++v) _mm256_storeu_ps(y + h * yStride + offset + 8 * v, acc[h][v]);
}

// ---- AVX-512: 16 keys a vector ----------------------------------------------------------------

template <int R>
BROOK_AVX512 void scoresRun16(const float* q, int64_t qStride, const float* kt, int bs, int count, int n, float scale,
                              float* out, int64_t outStride)
{
    for (int j0 = 0; j0 < count; j0 += 16) {
        const __mmask16 m = count - j0 >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (count - j0)) - 1);
        __m512 acc[R];
        for (int h = 0; h < R; ++h) acc[h] = _mm512_setzero_ps();
        for (int d = 0; d < n; ++d) {
            const __m512 kd = _mm512_maskz_loadu_ps(m, kt + int64_t(d) * bs + j0);
            for (int h = 0; h < R; ++h) acc[h] = _mm512_fmadd_ps(_mm512_set1_ps(q[h * qStride + d]), kd, acc[h]);
        }
        const __m512 sv = _mm512_set1_ps(scale);
        for (int h = 0; h < R; ++h) _mm512_mask_storeu_ps(out + h * outStride + j0, m, _mm512_mul_ps(acc[h], sv));
    }
}

// R heads' y over VC vectors of 16 floats (from float `offset`) in registers across the rows:
// the same fma per element, in row order, as one head at a time. Each vector of a row is loaded
// once into a register for the R heads (GCC would otherwise fold the load into every fma, and
// 512-bit loads, not fmas, bounded the loop: one load a fma ran at half the scores' rate).
template <int VC, int R>
BROOK_AVX512 void weightedRowsRegs(float* y, int64_t yStride, const float* w, int64_t wStride, const float* rows,
                                   int64_t stride, int count, int offset)
{
    __m512 acc[R][VC];
    for (int h = 0; h < R; ++h)
        for (int v = 0; v < VC; ++v) acc[h][v] = _mm512_loadu_ps(y + h * yStride + offset + 16 * v);
    for (int r = 0; r < count; ++r) {
        __m512 wr[R];
        for (int h = 0; h < R; ++h) wr[h] = _mm512_set1_ps(w[h * wStride + r]);
        for (int v = 0; v < VC; ++v) {
            __m512 x = _mm512_loadu_ps(rows + r * stride + offset + 16 * v);
            asm("" : "+v"(x));  // keep x in a register: one load for R fmas
            for (int h = 0; h < R; ++h) acc[h][v] = _mm512_fmadd_ps(wr[h], x, acc[h][v]);
        }
    }
    for (int h = 0; h < R; ++h)
        for (int v = 0; v < VC; ++v) _mm512_storeu_ps(y + h * yStride + offset + 16 * v, acc[h][v]);
}

// Any n: one head at a time, 16 floats a vector and a scalar tail (fma, as the vector lanes).
BROOK_AVX512 void weightedRowsAny512(float* y, const float* w, const float* rows, int64_t stride, int count, int n)
{
    for (int r = 0; r < count; ++r) {
        const __m512 a = _mm512_set1_ps(w[r]);
        const float* x = rows + r * stride;
        int i = 0;
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(y + i, _mm512_fmadd_ps(a, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
        for (; i < n; ++i) y[i] = __builtin_fmaf(w[r], x[i], y[i]);
    }
}

// n = 16 V: heads four at a time over 64 floats (16 accumulators, rows re-read from L1 for each
// 64), the rest one at a time.
template <int V>
BROOK_AVX512 void weightedRowsHeads512(float* y, int heads, int64_t yStride, const float* w, int64_t wStride,
                                       const float* rows, int64_t stride, int count)
{
    int h = 0;
    for (; h + 4 <= heads; h += 4)
        for (int offset = 0; offset < 16 * V; offset += 64)
            weightedRowsRegs<4, 4>(y + h * yStride, yStride, w + h * wStride, wStride, rows, stride, count, offset);
    for (; h < heads; ++h)
        for (int offset = 0; offset < 16 * V; offset += 64)
            weightedRowsRegs<4, 1>(y + h * yStride, yStride, w + h * wStride, wStride, rows, stride, count, offset);
}

}  // namespace

// ---- scalar ---------------------------------------------------------------------------------

void scoresTileScalar(const float* q, int heads, int64_t qStride, const float* kt, int blockSize, int count, int n,
                      float scale, float* out, int64_t outStride)
{
    for (int h = 0; h < heads; ++h)
        for (int j = 0; j < count; ++j) {
            float s = 0.0f;
            for (int d = 0; d < n; ++d) s += q[h * qStride + d] * kt[int64_t(d) * blockSize + j];
            out[h * outStride + j] = s * scale;
        }
}

void weightedRowsScalar(float* y, int heads, int64_t yStride, const float* w, int64_t wStride, const float* rows,
                        int64_t stride, int count, int n)
{
    for (int h = 0; h < heads; ++h)
        for (int r = 0; r < count; ++r)
            for (int i = 0; i < n; ++i) y[h * yStride + i] += w[h * wStride + r] * rows[r * stride + i];
}

// ---- AVX2 -----------------------------------------------------------------------------------

BROOK_AVX2 void scoresTileAvx2(const float* q, int heads, int64_t qStride, const float* kt, int blockSize, int count,
                               int n, float scale, float* out, int64_t outStride)
{
    inRuns(heads, [&]<int R>(int h) {
        scoresRun8<R>(q + h * qStride, qStride, kt, blockSize, count, n, scale, out + h * outStride, outStride);
    });
}

BROOK_AVX2 void weightedRowsAvx2(float* y, int heads, int64_t yStride, const float* w, int64_t wStride,
                                 const float* rows, int64_t stride, int count, int n)
{
    // 16 ymm registers hold two heads of 32 floats (8 accumulators, 2 weights, the loaded row):
    // a row's 32 floats are loaded once for both heads, and y stays in registers over the rows
    // (y through L1 cost a load and a store for every fma). An odd head, or n not a multiple of
    // 32: one head, y through L1.
    if (n % 32 == 0) {
        int h = 0;
        for (; h + 2 <= heads; h += 2)
            for (int offset = 0; offset < n; offset += 32)
                weightedRowsRegs8<4, 2>(y + h * yStride, yStride, w + h * wStride, wStride, rows, stride, count,
                                        offset);
        for (; h < heads; ++h)
            for (int offset = 0; offset < n; offset += 32)
                weightedRowsRegs8<4, 1>(y + h * yStride, yStride, w + h * wStride, wStride, rows, stride, count,
                                        offset);
        return;
    }
    for (int h = 0; h < heads; ++h) {
        float* yh = y + h * yStride;
        for (int r = 0; r < count; ++r) {
            const __m256 a = _mm256_set1_ps(w[h * wStride + r]);
            const float* x = rows + r * stride;
            int i = 0;
            for (; i + 8 <= n; i += 8)
                _mm256_storeu_ps(yh + i, _mm256_fmadd_ps(a, _mm256_loadu_ps(x + i), _mm256_loadu_ps(yh + i)));
            for (; i < n; ++i) yh[i] = __builtin_fmaf(w[h * wStride + r], x[i], yh[i]);
        }
    }
}

// ---- AVX-512 --------------------------------------------------------------------------------

BROOK_AVX512 void scoresTileAvx512(const float* q, int heads, int64_t qStride, const float* kt, int blockSize,
                                   int count, int n, float scale, float* out, int64_t outStride)
{
    inRuns(heads, [&]<int R>(int h) {
        scoresRun16<R>(q + h * qStride, qStride, kt, blockSize, count, n, scale, out + h * outStride, outStride);
    });
}

BROOK_AVX512 void weightedRowsAvx512(float* y, int heads, int64_t yStride, const float* w, int64_t wStride,
                                     const float* rows, int64_t stride, int count, int n)
{
    switch (n) {
    case 64: weightedRowsHeads512<4>(y, heads, yStride, w, wStride, rows, stride, count); return;
    case 128: weightedRowsHeads512<8>(y, heads, yStride, w, wStride, rows, stride, count); return;
    case 256: weightedRowsHeads512<16>(y, heads, yStride, w, wStride, rows, stride, count); return;
    default:
        for (int h = 0; h < heads; ++h) weightedRowsAny512(y + h * yStride, w + h * wStride, rows, stride, count, n);
        return;
    }
}

}  // namespace brook::cpu::attention_tiles
