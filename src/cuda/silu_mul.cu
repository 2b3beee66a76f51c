// SwiGLU activation: out[t, i] = silu(gate[t, i]) * up[t, i], gate = gateUp[t, :I], up = gateUp[t, I:].
#include "cuda/cuda_check.h"
#include "cuda/layer_kernels.h"

namespace brook::cuda {

namespace {
template <typename T>
__global__ void silu_mul_kernel(const T* __restrict__ gateUp, T* __restrict__ out, int I, int64_t total)
{
    for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total;
         idx += int64_t(gridDim.x) * blockDim.x) {
        const int64_t t = idx / I, i = idx % I;
        const float g = toFloat(gateUp[t * 2 * I + i]);
        const float u = toFloat(gateUp[t * 2 * I + I + i]);
        out[idx] = fromFloat<T>(g / (1.0f + __expf(-g)) * u);
    }
}
}  // namespace

void launch_silu_mul(const void* gateUp, void* out, int T, int I, ElementType type, cudaStream_t stream)
{
    const int64_t total = int64_t(T) * I;
    if (total == 0) return;
    const int blocks = int(std::min<int64_t>((total + 255) / 256, 65535));
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        silu_mul_kernel<E><<<blocks, 256, 0, stream>>>(static_cast<const E*>(gateUp), static_cast<E*>(out), I, total);
    });
    BROOK_CUDA_CHECK_LAUNCH();
}

}  // namespace brook::cuda
