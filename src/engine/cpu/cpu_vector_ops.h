// CpuVectorOps: the small element-wise kernels of a layer (dot, axpy, RMSNorm, SiLU * up) on one
// vector path, picked once by CpuIsa. cpu_ops.h keeps the plain references (which the CUDA tests
// use too); these compute the same functions with fp32 sums in another order and a polynomial
// exp within 2 ulp of std::exp (tests/engine/test_cpu_vector_ops.cpp). Stateless; thread-safe.
#pragma once

#include "engine/cpu/cpu_features.h"

#include <cstdint>

namespace brook::cpu {

struct CpuVectorOps {
    float (*dot)(const float* a, const float* b, int n) = nullptr;
    void (*axpy)(float* y, float a, const float* x, int n) = nullptr;  // y += a * x
    void (*scale)(float* y, float a, int n) = nullptr;                 // y *= a
    // out[T, H] = x * rsqrt(mean(x^2) + eps) * weight (in place allowed)
    void (*rmsnorm)(const float* x, const float* weight, float* out, int T, int H, float eps) = nullptr;
    // out[T, I] = silu(gateUp[T, :I]) * gateUp[T, I:]
    void (*siluMul)(const float* gateUp, float* out, int T, int I) = nullptr;
    // out[n] = exp(x[n]) (x <= 0 in attention; any x is handled)
    void (*exp)(const float* x, float* out, int n) = nullptr;
    // Attention over one block of the paged cache, `count` rows `stride` floats apart:
    // out[r] = dot(q, rows + r * stride, n) * scale, each exactly as dot() computes it, and
    // y += sum_r w[r] * (rows + r * stride), exactly as axpy() row after row. The vector paths
    // keep q / y in registers across the rows instead of reloading (and storing) them per row.
    void (*dotRows)(const float* q, const float* rows, int64_t stride, int count, int n, float scale,
                    float* out) = nullptr;
    void (*axpyRows)(float* y, const float* w, const float* rows, int64_t stride, int count, int n) = nullptr;

    static const CpuVectorOps& forIsa(CpuIsa isa);
};

}  // namespace brook::cpu
