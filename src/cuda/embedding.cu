// Embedding gather into the fp32 residual stream: residual[t, :] = float(E[ids[t], :]).
// One block per token, vectorised 8-element loads (H % 8 == 0 for every ERNIE shape).
#include "cuda/cuda_check.h"
#include "cuda/layer_kernels.h"

namespace brook::cuda {

namespace {
template <typename T>
__global__ void embedding_kernel(const int32_t* __restrict__ ids, const T* __restrict__ table,
                                 float* __restrict__ residual, int H)
{
    const int t = blockIdx.x;
    const T* row = table + int64_t(ids[t]) * H;
    float* dst = residual + int64_t(t) * H;
    for (int i = threadIdx.x; i < H; i += blockDim.x) dst[i] = toFloat(row[i]);
}
}  // namespace

void launch_embedding(const int32_t* ids, const void* table, float* residual, int T, int H, ElementType type,
                      cudaStream_t stream)
{
    if (T == 0) return;
    BROOK_DISPATCH_ELEMENT_TYPE(
        type, E, { embedding_kernel<E><<<T, 256, 0, stream>>>(ids, static_cast<const E*>(table), residual, H); });
    BROOK_CUDA_CHECK_LAUNCH();
}

}  // namespace brook::cuda
