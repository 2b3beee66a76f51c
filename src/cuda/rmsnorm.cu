// Residual add fused with RMSNorm, as ERNIE's pre-norm blocks need it:
//   residual[row] += delta[row];  out[r] = residual[row] * rsqrt(mean(residual[row]^2) + eps) * w
// The residual stream stays fp32 (more exact than the model's bf16 residual; the CPU backend
// is fp32 throughout). One block per row; each thread keeps its slice in registers.
#include "cuda/cuda_check.h"
#include "cuda/pdl.cuh"
#include "cuda/layer_kernels.h"

namespace brook::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxPerThread = 16;  // H up to 4096

__device__ float blockSum(float v)
{
    __shared__ float partial[kThreads / 32];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) total += partial[w];
    __syncthreads();
    return total;
}

template <typename T>
__global__ void add_rmsnorm_kernel(float* __restrict__ residual, const T* __restrict__ delta,
                                   const T* __restrict__ weight, T* __restrict__ out,
                                   const int32_t* __restrict__ rowIndex, int H, float eps)
{
    pdlAllowNext();
    pdlWaitForPrevious();
    const int r = blockIdx.x;
    const int row = rowIndex ? rowIndex[r] : r;
    float* x = residual + int64_t(row) * H;
    float values[kMaxPerThread];
    float sumSquares = 0.0f;
    int n = 0;
    for (int i = threadIdx.x; i < H; i += kThreads, ++n) {
        float v = __ldcg(x + i);
        if (delta) {
            v += toFloat(__ldcg(delta + int64_t(row) * H + i));
            x[i] = v;
        }
        values[n] = v;
        sumSquares += v * v;
    }
    const float scale = rsqrtf(blockSum(sumSquares) / float(H) + eps);
    n = 0;
    for (int i = threadIdx.x; i < H; i += kThreads, ++n)
        out[int64_t(r) * H + i] = fromFloat<T>(values[n] * scale * toFloat(weight[i]));
}

}  // namespace

void launch_add_rmsnorm(float* residual, const void* delta, const void* weight, void* out, const int32_t* rowIndex,
                        int rows, int H, float eps, ElementType type, cudaStream_t stream)
{
    if (rows == 0) return;
    if (H > kThreads * kMaxPerThread) throw CudaError("rmsnorm: hidden size " + std::to_string(H) + " too large");
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        launchDependent(add_rmsnorm_kernel<E>, dim3(rows), dim3(kThreads), 0, stream, residual,
                        static_cast<const E*>(delta), static_cast<const E*>(weight), static_cast<E*>(out), rowIndex, H,
                        eps);
    });
}

}  // namespace brook::cuda
