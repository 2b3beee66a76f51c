#include "cuda/cuda_check.h"
#include "cuda/skinny_gemm.h"

namespace brook::cuda {

namespace {

constexpr int kWarps = 8;            // per block
constexpr int kColumnsPerWarp = 2;   // output columns (weight rows) per warp
constexpr int kMaxK = 4096;

template <typename T>
struct Vec8 {
    uint4 raw;  // 8 elements of T
    __device__ float at(int i) const { return toFloat(reinterpret_cast<const T*>(&raw)[i]); }
};

template <typename T, int M, typename Out>
__global__ void __launch_bounds__(kWarps * 32)
skinny_gemm_kernel(const T* __restrict__ x, const T* __restrict__ w, Out* __restrict__ out, int N, int K,
                   bool accumulate)
{
    extern __shared__ __align__(16) unsigned char shared[];
    T* xs = reinterpret_cast<T*>(shared);  // [M, K]
    {
        const uint4* src = reinterpret_cast<const uint4*>(x);
        uint4* dst = reinterpret_cast<uint4*>(xs);
        for (int i = threadIdx.x; i < M * K / 8; i += blockDim.x) dst[i] = src[i];
    }
    __syncthreads();

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int column0 = (blockIdx.x * kWarps + warp) * kColumnsPerWarp;
    if (column0 >= N) return;

    float acc[kColumnsPerWarp][M];
#pragma unroll
    for (int c = 0; c < kColumnsPerWarp; ++c)
#pragma unroll
        for (int m = 0; m < M; ++m) acc[c][m] = 0.0f;

    const int vectors = K / 8;  // 16-byte chunks per weight row
    for (int v = lane; v < vectors; v += 32) {
        Vec8<T> wv[kColumnsPerWarp];
#pragma unroll
        for (int c = 0; c < kColumnsPerWarp; ++c) {
            const int column = min(column0 + c, N - 1);
            wv[c].raw = __ldg(reinterpret_cast<const uint4*>(w + int64_t(column) * K) + v);
        }
#pragma unroll
        for (int m = 0; m < M; ++m) {
            Vec8<T> xv;
            xv.raw = reinterpret_cast<const uint4*>(xs + m * K)[v];
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float xi = xv.at(i);
#pragma unroll
                for (int c = 0; c < kColumnsPerWarp; ++c) acc[c][m] += xi * wv[c].at(i);
            }
        }
    }
#pragma unroll
    for (int c = 0; c < kColumnsPerWarp; ++c)
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2)
                acc[c][m] += __shfl_xor_sync(0xffffffffu, acc[c][m], offset);
    if (lane == 0) {
#pragma unroll
        for (int c = 0; c < kColumnsPerWarp; ++c) {
            const int column = column0 + c;
            if (column >= N) break;
#pragma unroll
            for (int m = 0; m < M; ++m) {
                Out* dst = out + int64_t(m) * N + column;
                const float value = acc[c][m] + (accumulate ? toFloat(*dst) : 0.0f);
                *dst = fromFloat<Out>(value);
            }
        }
    }
}

template <typename T, typename Out, int M>
void launchRows(const void* x, const void* w, void* out, int N, int K, bool accumulate, cudaStream_t stream)
{
    const int columnsPerBlock = kWarps * kColumnsPerWarp;
    const int blocks = (N + columnsPerBlock - 1) / columnsPerBlock;
    const size_t sharedBytes = size_t(M) * K * sizeof(T);
    auto kernel = skinny_gemm_kernel<T, M, Out>;
    if (sharedBytes > 48 * 1024)
        BROOK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
    kernel<<<blocks, kWarps * 32, sharedBytes, stream>>>(static_cast<const T*>(x), static_cast<const T*>(w),
                                                         static_cast<Out*>(out), N, K, accumulate);
    BROOK_CUDA_CHECK_LAUNCH();
}

template <typename T, typename Out>
void dispatchRows(int M, const void* x, const void* w, void* out, int N, int K, bool accumulate, cudaStream_t stream)
{
    switch (M) {
    case 1: launchRows<T, Out, 1>(x, w, out, N, K, accumulate, stream); break;
    case 2: launchRows<T, Out, 2>(x, w, out, N, K, accumulate, stream); break;
    case 3: launchRows<T, Out, 3>(x, w, out, N, K, accumulate, stream); break;
    case 4: launchRows<T, Out, 4>(x, w, out, N, K, accumulate, stream); break;
    case 5: launchRows<T, Out, 5>(x, w, out, N, K, accumulate, stream); break;
    case 6: launchRows<T, Out, 6>(x, w, out, N, K, accumulate, stream); break;
    case 7: launchRows<T, Out, 7>(x, w, out, N, K, accumulate, stream); break;
    default: launchRows<T, Out, 8>(x, w, out, N, K, accumulate, stream); break;
    }
}

} // namespace

bool skinny_gemm_supported(int M, int K)
{
    return M >= 1 && M <= kSkinnyMaxRows && K % 8 == 0 && K <= kMaxK;
}

void launch_skinny_gemm(const void* x, const void* w, void* out, int M, int N, int K, ElementType type,
                        bool outFloat, bool accumulate, cudaStream_t stream)
{
    if (!skinny_gemm_supported(M, K)) throw CudaError("skinny GEMM: unsupported shape");
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        if (outFloat) dispatchRows<E, float>(M, x, w, out, N, K, accumulate, stream);
        else dispatchRows<E, E>(M, x, w, out, N, K, accumulate, stream);
    });
}

} // namespace brook::cuda
