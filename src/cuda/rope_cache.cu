// Interleaved (GPT-J) RoPE fused with the KV-cache write.
//   for pair i of each head: (x[2i], x[2i+1]) rotated by angle = position * invFreq[i]
//   q -> q[T, NH, HD] (contiguous, for attention); k (rotated) and v -> cache slot of token t.
// One block per token; one thread per (head, pair). The angle is computed in fp32 exactly as
// transformers does (position * inv_freq in fp32), with accurate sincosf for large positions.
#include "cuda/cuda_check.h"
#include "cuda/layer_kernels.h"

namespace brook::cuda {

namespace {
template <typename T>
__global__ void rope_cache_kernel(const T* __restrict__ qkv, T* __restrict__ q, T* __restrict__ kCache,
                                  T* __restrict__ vCache, const int32_t* __restrict__ positions,
                                  const int32_t* __restrict__ slotMapping, const float* __restrict__ invFreq, int NH,
                                  int KVH, int HD)
{
    const int t = blockIdx.x;
    const int qDim = NH * HD, kvDim = KVH * HD;
    const T* row = qkv + int64_t(t) * (qDim + 2 * kvDim);
    const float position = float(positions[t]);
    const int slot = slotMapping[t];
    const int halfHd = HD / 2;
    // Rotated pairs: NH q heads then KVH k heads.
    for (int p = threadIdx.x; p < (NH + KVH) * halfHd; p += blockDim.x) {
        const int head = p / halfHd, i = p % halfHd;
        float s, c;
        sincosf(position * invFreq[i], &s, &c);
        const T* src = row + head * HD + 2 * i;  // k heads follow q heads in the row
        const float x0 = toFloat(src[0]), x1 = toFloat(src[1]);
        const T r0 = fromFloat<T>(x0 * c - x1 * s);
        const T r1 = fromFloat<T>(x1 * c + x0 * s);
        if (head < NH) {
            T* dst = q + int64_t(t) * qDim + head * HD + 2 * i;
            dst[0] = r0;
            dst[1] = r1;
        } else if (slot >= 0) {
            T* dst = kCache + int64_t(slot) * kvDim + (head - NH) * HD + 2 * i;
            dst[0] = r0;
            dst[1] = r1;
        }
    }
    if (slot >= 0)
        for (int i = threadIdx.x; i < kvDim; i += blockDim.x) vCache[int64_t(slot) * kvDim + i] = row[qDim + kvDim + i];
}
}  // namespace

void launch_rope_cache_write(const void* qkv, void* q, void* kCache, void* vCache, const int32_t* positions,
                             const int32_t* slotMapping, const float* invFreq, int T, int NH, int KVH, int HD,
                             int /*blockSize*/, ElementType type, cudaStream_t stream)
{
    if (T == 0) return;
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        rope_cache_kernel<E><<<T, 256, 0, stream>>>(static_cast<const E*>(qkv), static_cast<E*>(q),
                                                    static_cast<E*>(kCache), static_cast<E*>(vCache), positions,
                                                    slotMapping, invFreq, NH, KVH, HD);
    });
    BROOK_CUDA_CHECK_LAUNCH();
}

}  // namespace brook::cuda
