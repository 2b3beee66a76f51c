// Launchers for ERNIE-4.5's element-wise layer kernels (one .cu each):
//   embedding.cu     residual[T, H] (fp32) = E[ids]
//   rmsnorm.cu       residual += delta; out = rmsnorm(residual) * w   (fp32 math)
//   rope_cache.cu    interleaved RoPE on q and k, q copied out, k and v written to the paged cache
//   silu_mul.cu      out[T, I] = silu(gateUp[:, :I]) * gateUp[:, I:]
// CPU references: src/engine/cpu/cpu_ops.h. Tests: tests/cuda/test_layer_kernels.cpp.
// Letters: T tokens, H hidden, NH/KVH heads, HD head dim, I intermediate.
#pragma once

#include "cuda/cuda_dtype.h"

#include <cstdint>
#include <cuda_runtime.h>

namespace brook::cuda {

// residual[T, H] = float(table[ids[t]])
void launch_embedding(const int32_t* ids, const void* table, float* residual, int T, int H, ElementType type,
                      cudaStream_t stream);

// For each of `rows` rows r (rowIndex ? rowIndex[r] : r) of residual [*, H]:
//   if delta: residual[row] += float(delta[row])   (delta is [*, H] in the element type)
//   out[r] = rmsnorm(residual[row]) * weight        (out is [rows, H] in the element type)
void launch_add_rmsnorm(float* residual, const void* delta, const void* weight, void* out, const int32_t* rowIndex,
                        int rows, int H, float eps, ElementType type, cudaStream_t stream);

// qkv: [T, NH*HD + 2*KVH*HD] (q | k | v). Writes RoPE'd q to q [T, NH, HD]; RoPE'd k and v to
// kCache/vCache [numBlocks, blockSize, KVH, HD] at slot slotMapping[t] (= block * blockSize +
// offset; negative = padding, skipped). invFreq: [HD/2] fp32, invFreq[i] = theta^(-2i/HD).
void launch_rope_cache_write(const void* qkv, void* q, void* kCache, void* vCache, const int32_t* positions,
                             const int32_t* slotMapping, const float* invFreq, int T, int NH, int KVH, int HD,
                             int blockSize, ElementType type, cudaStream_t stream);

// gateUp: [T, 2I] (gate | up); out: [T, I].
void launch_silu_mul(const void* gateUp, void* out, int T, int I, ElementType type, cudaStream_t stream);

}  // namespace brook::cuda
