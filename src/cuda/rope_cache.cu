// Interleaved (GPT-J) RoPE fused with the KV-cache write.
//   for pair i of each head: (x[2i], x[2i+1]) rotated by angle = position * invFreq[i]
//   q -> q[T, NH, HD] (contiguous, for attention); k (rotated) and v -> cache slot of token t.
// One block per token. A thread owns one pair index i and walks the heads with it, so each
// token computes its HD / 2 angles' sines and cosines once rather than once per head (the angle
// does not depend on the head). The angle is computed in fp32 exactly as transformers does
// (position * inv_freq in fp32), with accurate sincosf for large positions.
// Launched as a programmatic dependent (pdl.cuh) when CudaFeatures::pdlPrefillKernels: the step
// inputs (positions, slots) and inverse frequencies are read before the wait, qkv after it.
#include "cuda/cuda_check.h"
#include "cuda/layer_kernels.h"
#include "cuda/pdl.cuh"

namespace brook::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    rope_cache_kernel(const T* __restrict__ qkv, T* __restrict__ q, T* __restrict__ kCache, T* __restrict__ vCache,
                      const int32_t* __restrict__ positions, const int32_t* __restrict__ slotMapping,
                      const float* __restrict__ invFreq, int NH, int KVH, int HD)
{
    pdlAllowNext();
    const int t = blockIdx.x;
    const int qDim = NH * HD, kvDim = KVH * HD;
    const int halfHd = HD / 2;
    const float position = float(positions[t]);
    const int slot = slotMapping[t];
    pdlWaitForPrevious();
    const T* row = qkv + int64_t(t) * (qDim + 2 * kvDim);
    // Thread x owns pair i = x % halfHd of heads x / halfHd, x / halfHd + lanesPerPair, ... (NH q
    // heads, then KVH k heads: k follows q in the row).
    const int lanesPerPair = max(kThreads / halfHd, 1);
    for (int first = threadIdx.x; first < lanesPerPair * halfHd; first += kThreads) {
        const int i = first % halfHd;
        float s, c;
        sincosf(position * invFreq[i], &s, &c);
        for (int head = first / halfHd; head < NH + KVH; head += lanesPerPair) {
            const uint32_t packed = __ldcg(reinterpret_cast<const uint32_t*>(row + head * HD + 2 * i));
            const T* pair = reinterpret_cast<const T*>(&packed);
            const float x0 = toFloat(pair[0]), x1 = toFloat(pair[1]);
            uint32_t rotated;
            T* r = reinterpret_cast<T*>(&rotated);
            r[0] = fromFloat<T>(x0 * c - x1 * s);
            r[1] = fromFloat<T>(x1 * c + x0 * s);
            if (head < NH) *reinterpret_cast<uint32_t*>(q + int64_t(t) * qDim + head * HD + 2 * i) = rotated;
            else if (slot >= 0)
                *reinterpret_cast<uint32_t*>(kCache + int64_t(slot) * kvDim + (head - NH) * HD + 2 * i) = rotated;
        }
    }
    if (slot >= 0)
        for (int i = threadIdx.x; i < kvDim / 2; i += kThreads)
            reinterpret_cast<uint32_t*>(vCache + int64_t(slot) * kvDim)[i] =
                __ldcg(reinterpret_cast<const uint32_t*>(row + qDim + kvDim) + i);
}

}  // namespace

void launch_rope_cache_write(const void* qkv, void* q, void* kCache, void* vCache, const int32_t* positions,
                             const int32_t* slotMapping, const float* invFreq, int T, int NH, int KVH, int HD,
                             int /*blockSize*/, ElementType type, cudaStream_t stream)
{
    if (T == 0) return;
    if (HD % 2 != 0) throw CudaError("rope_cache_write: odd head dim " + std::to_string(HD));
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        launchDependentIf(pdlPrefillKernels(), dim3(1, 1, 1), rope_cache_kernel<E>, dim3(T), dim3(kThreads), 0, stream,
                          static_cast<const E*>(qkv), static_cast<E*>(q), static_cast<E*>(kCache),
                          static_cast<E*>(vCache), positions, slotMapping, invFreq, NH, KVH, HD);
    });
}

}  // namespace brook::cuda
