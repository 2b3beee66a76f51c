// SwiGLU activation: out[t, i] = silu(gate[t, i]) * up[t, i], gate = gateUp[t, :I], up = gateUp[t, I:].
// Eight elements a thread (16-byte loads and store) when I % 8 == 0, as every ERNIE shape has;
// one otherwise. Launched as a programmatic dependent (pdl.cuh) when
// CudaFeatures::pdlPrefillKernels; gateUp is read after the wait, through L2.
#include "cuda/cuda_check.h"
#include "cuda/layer_kernels.h"
#include "cuda/pdl.cuh"
#include "cuda/silu_times.cuh"

#include <algorithm>

namespace brook::cuda {

namespace {

constexpr int kThreads = 256;

// kVector: elements per thread (8, or 1 for an I that is not a multiple of 8).
template <typename T, int kVector>
__global__ void __launch_bounds__(kThreads)
    silu_mul_kernel(const T* __restrict__ gateUp, T* __restrict__ out, int I, int64_t vectors)
{
    pdlAllowNext();
    pdlWaitForPrevious();
    const int perRow = I / kVector;
    for (int64_t v = blockIdx.x * int64_t(kThreads) + threadIdx.x; v < vectors; v += int64_t(gridDim.x) * kThreads) {
        const int64_t t = v / perRow;
        const int i = int(v - t * perRow) * kVector;
        const T* gate = gateUp + t * 2 * I + i;
        if constexpr (kVector == 8) {
            const uint4 g = __ldcg(reinterpret_cast<const uint4*>(gate));
            const uint4 u = __ldcg(reinterpret_cast<const uint4*>(gate + I));
            uint4 result;
            const T* gs = reinterpret_cast<const T*>(&g);
            const T* us = reinterpret_cast<const T*>(&u);
            T* r = reinterpret_cast<T*>(&result);
#pragma unroll
            for (int j = 0; j < 8; ++j) r[j] = siluTimes(gs[j], us[j]);
            *reinterpret_cast<uint4*>(out + t * I + i) = result;
        } else {
            out[t * I + i] = siluTimes(__ldcg(gate), __ldcg(gate + I));
        }
    }
}

template <typename T, int kVector>
void launchSiluMul(const void* gateUp, void* out, int tokens, int I, cudaStream_t stream)
{
    const int64_t vectors = int64_t(tokens) * (I / kVector);
    const int blocks = int(std::min<int64_t>((vectors + kThreads - 1) / kThreads, 65535));
    launchDependentIf(pdlPrefillKernels(), dim3(1, 1, 1), silu_mul_kernel<T, kVector>, dim3(blocks), dim3(kThreads), 0,
                      stream, static_cast<const T*>(gateUp), static_cast<T*>(out), I, vectors);
}

}  // namespace

void launch_silu_mul(const void* gateUp, void* out, int T, int I, ElementType type, cudaStream_t stream)
{
    if (int64_t(T) * I == 0) return;
    // 16-byte vectors need I % 8 == 0 and 16-byte aligned rows (cudaMalloc'd buffers are).
    const bool vectorized =
        I % 8 == 0 && reinterpret_cast<uintptr_t>(gateUp) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        if (vectorized) launchSiluMul<E, 8>(gateUp, out, T, I, stream);
        else launchSiluMul<E, 1>(gateUp, out, T, I, stream);
    });
}

}  // namespace brook::cuda
