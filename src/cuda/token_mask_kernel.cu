// One thread per (masked row, 32 tokens): reads one mask word and writes -inf over the tokens
// whose bit is clear. A word of all ones (most of them, inside a JSON string) writes nothing.
#include "cuda/cuda_check.h"
#include "cuda/token_mask_kernel.h"

namespace brook::cuda {

namespace {
__global__ void apply_token_mask_kernel(float* __restrict__ logits, const uint32_t* __restrict__ masks,
                                        const int32_t* __restrict__ rows, const int32_t* __restrict__ maskOf, int V,
                                        int W)
{
    const int k = blockIdx.y;
    const int word = blockIdx.x * blockDim.x + threadIdx.x;
    if (word >= W) return;
    const uint32_t bits = masks[size_t(maskOf[k]) * W + word];
    if (bits == 0xFFFFFFFFu) return;
    float* row = logits + size_t(rows[k]) * V;
    const int first = word * 32;
    const int last = min(first + 32, V);
    for (int t = first; t < last; ++t)
        if (!((bits >> (t - first)) & 1u)) row[t] = -INFINITY;
}
}  // namespace

void launch_apply_token_mask(float* logits, const uint32_t* masks, const int32_t* rows, const int32_t* maskOf, int K,
                             int V, int W, cudaStream_t stream)
{
    if (K == 0 || V == 0) return;
    // W covers V (GpuSampler checks), so no token lies past the mask.
    const dim3 grid((unsigned)((W + 127) / 128), (unsigned)K);
    apply_token_mask_kernel<<<grid, 128, 0, stream>>>(logits, masks, rows, maskOf, V, W);
    BROOK_CUDA_CHECK_LAUNCH();
}

}  // namespace brook::cuda
