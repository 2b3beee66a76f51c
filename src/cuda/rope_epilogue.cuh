// The RoPE + KV-cache-write epilogue shared by the qkv GEMMs (skinny_gemm.cu for decode,
// fused_gemm.cu for short prefills): one (even, odd) column pair of a qkv row, already rounded
// to the element type as a plain GEMM's output would be, rotated exactly as
// launch_rope_cache_write rotates it and written where SkinnyRope says. Reference:
// cpu::ropeInterleaved; tests: tests/cuda/test_gemm.cpp.
#pragma once

#include "cuda/cuda_dtype.h"
#include "cuda/skinny_gemm.h"

#include <cstdint>

namespace brook::cuda {

// What the RoPE epilogue reads from host-uploaded step inputs and constants for row m and this
// warp's column pair, loaded before the PDL wait (the epilogue's loads would otherwise be a
// dependent round trip at the very end of the kernel).
struct RopeRowInputs {
    int slot;
    float angle;  // position * inverse frequency of the pair
};

__device__ inline RopeRowInputs ropeRowInputs(const SkinnyRope& r, int m, int column)
{
    const int qDim = r.numHeads * r.headDim, kvDim = r.numKvHeads * r.headDim;
    RopeRowInputs in{r.slotMapping[m], 0.0f};
    if (column < qDim + kvDim) in.angle = float(r.positions[m]) * r.invFreq[(column % r.headDim) / 2];
    return in;
}

// RoPE + cache write of one (even, odd) column pair of row m, values already rounded to T.
template <typename T>
__device__ void ropeEpilogue(const SkinnyRope& r, const RopeRowInputs& in, int m, int column, T x0, T x1)
{
    const int qDim = r.numHeads * r.headDim, kvDim = r.numKvHeads * r.headDim;
    const int slot = in.slot;
    if (column >= qDim + kvDim) {  // v: no rotation
        if (slot < 0) return;
        T* dst = static_cast<T*>(r.vCache) + int64_t(slot) * kvDim + (column - qDim - kvDim);
        dst[0] = x0;
        dst[1] = x1;
        return;
    }
    float s, c;
    sincosf(in.angle, &s, &c);
    const float f0 = toFloat(x0), f1 = toFloat(x1);
    const T r0 = fromFloat<T>(f0 * c - f1 * s);
    const T r1 = fromFloat<T>(f1 * c + f0 * s);
    T* dst;
    if (column < qDim) {
        dst = static_cast<T*>(r.q) + int64_t(m) * qDim + column;
    } else {
        if (slot < 0) return;
        dst = static_cast<T*>(r.kCache) + int64_t(slot) * kvDim + (column - qDim);
    }
    dst[0] = r0;
    dst[1] = r1;
}

}  // namespace brook::cuda
