// The block kernels of CPU attention on each vector path (CpuVectorOps picks one set):
//  scoresTile:   out[h * outStride + j] = scale * sum_d q[h * qStride + d] * kt[d * blockSize + j]
//                for j < count: `heads` query heads against one cache block's K tile (PagedKv's
//                Tiles layout, [n][blockSize]). A vector holds 16 (8) keys, and heads are taken 8
//                at a time, so each loaded line of the tile feeds 8 FMAs.
//  weightedRows: y[h * yStride + i] += sum_r w[h * wStride + r] * rows[r * stride + i] for `heads`
//                outputs that read the same V rows (one GQA group); AVX-512 takes four heads per
//                load of a row, AVX2 two, each with y in registers across the rows.
// Each head's floats do not depend on how many heads a call takes (the same fma chain over d,
// the same one over r), so grouping work differently changes no result.
#pragma once

#include <cstdint>

namespace brook::cpu::attention_tiles {

void scoresTileScalar(const float* q, int heads, int64_t qStride, const float* kt, int blockSize, int count, int n,
                      float scale, float* out, int64_t outStride);
void scoresTileAvx2(const float* q, int heads, int64_t qStride, const float* kt, int blockSize, int count, int n,
                    float scale, float* out, int64_t outStride);
void scoresTileAvx512(const float* q, int heads, int64_t qStride, const float* kt, int blockSize, int count, int n,
                      float scale, float* out, int64_t outStride);

void weightedRowsScalar(float* y, int heads, int64_t yStride, const float* w, int64_t wStride, const float* rows,
                        int64_t stride, int count, int n);
void weightedRowsAvx2(float* y, int heads, int64_t yStride, const float* w, int64_t wStride, const float* rows,
                      int64_t stride, int count, int n);
void weightedRowsAvx512(float* y, int heads, int64_t yStride, const float* w, int64_t wStride, const float* rows,
                        int64_t stride, int count, int n);

}  // namespace brook::cpu::attention_tiles
