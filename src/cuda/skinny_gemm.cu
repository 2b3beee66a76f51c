#include "cuda/cuda_check.h"
#include "cuda/skinny_gemm.h"

namespace brook::cuda {

namespace {

constexpr int kWarps = 8;            // per block
// Output columns (weight rows) per warp: 2 for wide outputs; 1 below kNarrowN, where 2 would
// leave SMs idle (o_proj and down_proj have N = 1024: 64 blocks of 16 columns on 132 SMs).
constexpr int kNarrowN = 4096;
constexpr int kUnroll = 4;           // 16-byte weight loads per column in flight per lane
constexpr int kMaxK = 4096;

template <typename T>
__device__ inline float element(const uint4& raw, int i)
{
    return toFloat(reinterpret_cast<const T*>(&raw)[i]);
}

// Fills xs [M, K] (element type) with f(x) for the prologue.
template <typename T, int M, SkinnyPrologue P>
__device__ void fillRows(const void* x, const T* normWeight, float eps, T* xs, int K)
{
    if constexpr (P == SkinnyPrologue::None) {
        const uint4* src = static_cast<const uint4*>(x);
        uint4* dst = reinterpret_cast<uint4*>(xs);
        for (int i = threadIdx.x; i < M * K / 8; i += blockDim.x) dst[i] = src[i];
    } else if constexpr (P == SkinnyPrologue::SiluMul) {
        const T* gateUp = static_cast<const T*>(x);
        for (int i = threadIdx.x; i < M * K; i += blockDim.x) {
            const int m = i / K, k = i % K;
            const float g = toFloat(gateUp[int64_t(m) * 2 * K + k]);
            const float u = toFloat(gateUp[int64_t(m) * 2 * K + K + k]);
            xs[i] = fromFloat<T>(g / (1.0f + __expf(-g)) * u);
        }
    } else {
        const float* residual = static_cast<const float*>(x);
        __shared__ float partial[kWarps][M];
        __shared__ float scale[M];
        float sums[M];
#pragma unroll
        for (int m = 0; m < M; ++m) {
            sums[m] = 0.0f;
            for (int k = threadIdx.x; k < K; k += blockDim.x) {
                const float v = residual[int64_t(m) * K + k];
                sums[m] += v * v;
            }
            for (int offset = 16; offset > 0; offset /= 2) sums[m] += __shfl_xor_sync(0xffffffffu, sums[m], offset);
            if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32][m] = sums[m];
        }
        __syncthreads();
        if (threadIdx.x < M) {
            float total = 0.0f;
            for (int w = 0; w < kWarps; ++w) total += partial[w][threadIdx.x];
            scale[threadIdx.x] = rsqrtf(total / float(K) + eps);
        }
        __syncthreads();
        for (int i = threadIdx.x; i < M * K; i += blockDim.x) {
            const int m = i / K, k = i % K;
            xs[i] = fromFloat<T>(residual[i] * scale[m] * toFloat(normWeight[k]));
        }
    }
}

template <typename T, int M, typename Out, SkinnyPrologue P, int kColumnsPerWarp>
__global__ void __launch_bounds__(kWarps * 32)
skinny_gemm_kernel(const void* __restrict__ x, const T* __restrict__ w, Out* __restrict__ out, int N, int K,
                   bool accumulate, const T* __restrict__ normWeight, float eps)
{
    extern __shared__ __align__(16) unsigned char shared[];
    T* xs = reinterpret_cast<T*>(shared);  // [M, K]
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int column0 = (blockIdx.x * kWarps + warp) * kColumnsPerWarp;
    const uint4* rows[kColumnsPerWarp];
#pragma unroll
    for (int c = 0; c < kColumnsPerWarp; ++c)  // idle warps read a valid row and write nothing
        rows[c] = reinterpret_cast<const uint4*>(w + int64_t(min(column0 + c, N - 1)) * K);
    const int vectors = K / 8;  // 16-byte chunks per weight row

    // Issue the first weight loads before filling xs, so their latency overlaps the prologue.
    uint4 current[kUnroll][kColumnsPerWarp];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
        const int v = u * 32 + lane;
#pragma unroll
        for (int c = 0; c < kColumnsPerWarp; ++c) current[u][c] = v < vectors ? __ldg(rows[c] + v) : make_uint4(0, 0, 0, 0);
    }
    fillRows<T, M, P>(x, normWeight, eps, xs, K);
    __syncthreads();

    float acc[kColumnsPerWarp][M];
#pragma unroll
    for (int c = 0; c < kColumnsPerWarp; ++c)
#pragma unroll
        for (int m = 0; m < M; ++m) acc[c][m] = 0.0f;

    for (int base = 0; base < vectors; base += 32 * kUnroll) {
        uint4 next[kUnroll][kColumnsPerWarp];
        const int nextBase = base + 32 * kUnroll;
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int v = nextBase + u * 32 + lane;
#pragma unroll
            for (int c = 0; c < kColumnsPerWarp; ++c) next[u][c] = v < vectors ? __ldg(rows[c] + v) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int v = base + u * 32 + lane;
            if (v >= vectors) break;
#pragma unroll
            for (int m = 0; m < M; ++m) {
                const uint4 xv = reinterpret_cast<const uint4*>(xs + m * K)[v];
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    const float xi = element<T>(xv, i);
#pragma unroll
                    for (int c = 0; c < kColumnsPerWarp; ++c) acc[c][m] += xi * element<T>(current[u][c], i);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int c = 0; c < kColumnsPerWarp; ++c) current[u][c] = next[u][c];
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

struct Launch {
    const void* x;
    const void* w;
    void* out;
    int N, K;
    bool accumulate;
    const void* normWeight;
    float eps;
    cudaStream_t stream;
};

template <typename T, typename Out, int M, SkinnyPrologue P, int kColumnsPerWarp>
void launchColumns(const Launch& l)
{
    const int columnsPerBlock = kWarps * kColumnsPerWarp;
    const int blocks = (l.N + columnsPerBlock - 1) / columnsPerBlock;
    const size_t sharedBytes = size_t(M) * l.K * sizeof(T);
    auto kernel = skinny_gemm_kernel<T, M, Out, P, kColumnsPerWarp>;
    if (sharedBytes > 48 * 1024)
        BROOK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
    kernel<<<blocks, kWarps * 32, sharedBytes, l.stream>>>(l.x, static_cast<const T*>(l.w), static_cast<Out*>(l.out),
                                                          l.N, l.K, l.accumulate,
                                                          static_cast<const T*>(l.normWeight), l.eps);
    BROOK_CUDA_CHECK_LAUNCH();
}

template <typename T, typename Out, int M, SkinnyPrologue P>
void launchRows(const Launch& l)
{
    if (l.N <= kNarrowN) launchColumns<T, Out, M, P, 1>(l);
    else launchColumns<T, Out, M, P, 2>(l);
}

template <typename T, typename Out, SkinnyPrologue P>
void dispatchRows(int M, const Launch& l)
{
    switch (M) {
    case 1: launchRows<T, Out, 1, P>(l); break;
    case 2: launchRows<T, Out, 2, P>(l); break;
    case 3: launchRows<T, Out, 3, P>(l); break;
    case 4: launchRows<T, Out, 4, P>(l); break;
    case 5: launchRows<T, Out, 5, P>(l); break;
    case 6: launchRows<T, Out, 6, P>(l); break;
    case 7: launchRows<T, Out, 7, P>(l); break;
    default: launchRows<T, Out, 8, P>(l); break;
    }
}

template <typename T, typename Out>
void dispatchPrologue(int M, SkinnyPrologue prologue, const Launch& l)
{
    switch (prologue) {
    case SkinnyPrologue::None: dispatchRows<T, Out, SkinnyPrologue::None>(M, l); break;
    case SkinnyPrologue::RmsNorm: dispatchRows<T, Out, SkinnyPrologue::RmsNorm>(M, l); break;
    case SkinnyPrologue::SiluMul: dispatchRows<T, Out, SkinnyPrologue::SiluMul>(M, l); break;
    }
}

} // namespace

bool skinny_gemm_supported(int M, int K)
{
    return M >= 1 && M <= kSkinnyMaxRows && K % 8 == 0 && K <= kMaxK;
}

void launch_skinny_gemm(const void* x, const void* w, void* out, int M, int N, int K, ElementType type,
                        bool outFloat, bool accumulate, cudaStream_t stream, SkinnyPrologue prologue,
                        const void* normWeight, float eps)
{
    if (!skinny_gemm_supported(M, K)) throw CudaError("skinny GEMM: unsupported shape");
    if (prologue == SkinnyPrologue::RmsNorm && !normWeight) throw CudaError("skinny GEMM: RmsNorm needs a weight");
    const Launch l{x, w, out, N, K, accumulate, normWeight, eps, stream};
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        if (outFloat) dispatchPrologue<E, float>(M, prologue, l);
        else dispatchPrologue<E, E>(M, prologue, l);
    });
}

} // namespace brook::cuda
