// CpuVectorOps: the small kernels of a layer (dot, RMSNorm, SiLU * up, attention's block kernels)
// on one vector path, picked once by CpuIsa. cpu_ops.h keeps the plain references (which the CUDA
// tests use too); these compute the same functions with fp32 sums in another order and a
// polynomial exp (tests/engine/test_cpu_backend_paths.cpp: the attention kernels against double
// sums and std::exp, the whole forward pass against the scalar path). Stateless; thread-safe.
#pragma once

#include "engine/cpu/cpu_features.h"

#include <cstdint>

namespace brook::cpu {

struct CpuVectorOps {
    float (*dot)(const float* a, const float* b, int n) = nullptr;
    void (*scale)(float* y, float a, int n) = nullptr;  // y *= a
    // out[T, H] = x * rsqrt(mean(x^2) + eps) * weight (in place allowed)
    void (*rmsnorm)(const float* x, const float* weight, float* out, int T, int H, float eps) = nullptr;
    // out[T, I] = silu(gateUp[T, :I]) * gateUp[T, I:]
    void (*siluMul)(const float* gateUp, float* out, int T, int I) = nullptr;
    // Attention's block kernels (cpu_attention_tiles.h): a block's scores for several query
    // heads from its transposed K tile, and their probability-weighted sum of its V rows.
    void (*scoresTile)(const float* q, int heads, int64_t qStride, const float* kt, int blockSize, int count, int n,
                       float scale, float* out, int64_t outStride) = nullptr;
    void (*weightedRows)(float* y, int heads, int64_t yStride, const float* w, int64_t wStride, const float* rows,
                         int64_t stride, int count, int n) = nullptr;
    // x[i] = exp(x[i] - max(x)) for n >= 1 values; returns their sum (softmax's numerators and
    // denominator, before the division).
    float (*expShifted)(float* x, int n) = nullptr;

    static const CpuVectorOps& forIsa(CpuIsa isa);
};

}  // namespace brook::cpu
