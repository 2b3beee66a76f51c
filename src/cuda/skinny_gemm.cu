#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/pdl.cuh"
#include "cuda/rope_epilogue.cuh"
#include "cuda/skinny_gemm.h"

#include <type_traits>

namespace brook::cuda {

namespace {

constexpr int kWarps = 8;  // per block
// Output columns (weight rows) per warp: 2 for wide outputs; 1 below kNarrowN, where 2 would
// leave SMs idle (o_proj and down_proj have N = 1024: 64 blocks of 16 columns on 132 SMs).
constexpr int kNarrowN = 4096;
constexpr int kUnroll = 4;  // 16-byte weight loads per column in flight per lane
constexpr int kMaxK = 4096;

template <typename T>
__device__ inline float element(const uint4& raw, int i)
{
    return toFloat(reinterpret_cast<const T*>(&raw)[i]);
}

// What the RmsNorm prologue reads that no kernel writes: this thread's norm weights, loaded
// before the PDL wait so the prologue's chain after it is the residual load and one barrier.
constexpr int kNormPerThread = kMaxK / 4 / (kWarps * 32);  // float4s per thread and row

template <typename T, SkinnyPrologue P>
struct PrologueConstants {
    __device__ void load(const T*, int) {}
};
template <typename T>
struct PrologueConstants<T, SkinnyPrologue::RmsNorm> {
    uint2 weight[kNormPerThread];  // 4 norm weights per float4 of the row
    __device__ void load(const T* normWeight, int K)
    {
#pragma unroll
        for (int j = 0; j < kNormPerThread; ++j) {
            const int v = threadIdx.x + j * kWarps * 32;
            weight[j] = v < K / 4 ? __ldg(reinterpret_cast<const uint2*>(normWeight) + v) : make_uint2(0, 0);
        }
    }
};

// Fills xs [M, K] (element type) with f(x) for the prologue. Vector loads, each thread's loads
// issued together: at batch 1 the prologue is a chain of memory round trips on the critical
// path, so the fewer the better (K <= kMaxK = 4096: at most 2 float4 / uint4 per thread and row).
template <typename T, int M, SkinnyPrologue P>
__device__ void fillRows(const void* x, const PrologueConstants<T, P>& constants, float eps, T* xs, int K)
{
    if constexpr (P == SkinnyPrologue::None) {
        const uint4* src = static_cast<const uint4*>(x);
        uint4* dst = reinterpret_cast<uint4*>(xs);
        for (int i = threadIdx.x; i < M * K / 8; i += blockDim.x) dst[i] = __ldcg(src + i);
    } else if constexpr (P == SkinnyPrologue::SiluMul) {
        // x = gate | up rows of 2K; 8 elements per uint4. Up to kLoads vectors' loads in flight
        // per thread before any arithmetic (K = 3072 at M = 1 is 1.5 per thread).
        constexpr int kLoads = 4;
        const int vectorsPerRow = K / 8;
        for (int first = threadIdx.x; first < M * vectorsPerRow; first += kLoads * blockDim.x) {
            uint4 g[kLoads], u[kLoads];
#pragma unroll
            for (int k = 0; k < kLoads; ++k) {
                const int i = first + k * blockDim.x;
                if (i >= M * vectorsPerRow) break;
                const int m = i / vectorsPerRow, v = i % vectorsPerRow;
                const uint4* row = static_cast<const uint4*>(x) + int64_t(m) * 2 * vectorsPerRow;
                g[k] = __ldcg(row + v);
                u[k] = __ldcg(row + vectorsPerRow + v);
            }
#pragma unroll
            for (int k = 0; k < kLoads; ++k) {
                const int i = first + k * blockDim.x;
                if (i >= M * vectorsPerRow) break;
                uint4 result;
                T* r = reinterpret_cast<T*>(&result);
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const float gj = element<T>(g[k], j);
                    r[j] = fromFloat<T>(gj / (1.0f + __expf(-gj)) * element<T>(u[k], j));
                }
                reinterpret_cast<uint4*>(xs)[i] = result;
            }
        }
    } else {
        // fp32 residual rows: float4 loads kept in registers for the second pass.
        constexpr int kPerThread = kNormPerThread;
        __shared__ float partial[kWarps][M];
        const float4* rows = static_cast<const float4*>(x);
        const int vectorsPerRow = K / 4;
        float4 values[M][kPerThread];
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
            for (int j = 0; j < kPerThread; ++j) {
                const int v = threadIdx.x + j * kWarps * 32;
                values[m][j] =
                    v < vectorsPerRow ? __ldcg(rows + int64_t(m) * vectorsPerRow + v) : make_float4(0, 0, 0, 0);
            }
#pragma unroll
        for (int m = 0; m < M; ++m) {
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < kPerThread; ++j) {
                const float4 a = values[m][j];
                sum += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w;
            }
            for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
            if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32][m] = sum;
        }
        __syncthreads();
        // Every thread sums the 8 warp partials itself (same order everywhere): no second barrier.
        float scale[M];
#pragma unroll
        for (int m = 0; m < M; ++m) {
            float total = 0.0f;
#pragma unroll
            for (int w = 0; w < kWarps; ++w) total += partial[w][m];
            scale[m] = rsqrtf(total / float(K) + eps);
        }
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            const int v = threadIdx.x + j * kWarps * 32;
            if (v >= vectorsPerRow) continue;
            const T* w4 = reinterpret_cast<const T*>(&constants.weight[j]);
#pragma unroll
            for (int m = 0; m < M; ++m) {
                const float4 a = values[m][j];
                const float sm = scale[m];
                uint2 packed;
                T* o = reinterpret_cast<T*>(&packed);
                o[0] = fromFloat<T>(a.x * sm * toFloat(w4[0]));
                o[1] = fromFloat<T>(a.y * sm * toFloat(w4[1]));
                o[2] = fromFloat<T>(a.z * sm * toFloat(w4[2]));
                o[3] = fromFloat<T>(a.w * sm * toFloat(w4[3]));
                reinterpret_cast<uint2*>(xs + int64_t(m) * K)[v] = packed;
            }
        }
    }
}

// kOneRound: the whole weight row fits the first round of loads (K <= 8 * 32 * kUnroll = 1024),
// so no second register buffer: at M = 1 three blocks then fit per SM and the 384 blocks of
// ERNIE's gate|up GEMV run in one wave, every block's weights loaded before the PDL wait.
template <typename T, int M, typename Out, SkinnyPrologue P, int kColumnsPerWarp, bool kRope, bool kOneRound>
__global__ void __launch_bounds__(kWarps * 32, (M == 1 && kOneRound) ? 3 : 1)
    skinny_gemm_kernel(const void* __restrict__ x, const T* __restrict__ w, Out* __restrict__ out, int N, int K,
                       bool accumulate, const T* __restrict__ normWeight, float eps, SkinnyRope rope, int earlyWait)
{
    static_assert(!kRope || kColumnsPerWarp == 2, "the RoPE epilogue needs both columns of a pair in one warp");
    extern __shared__ __align__(16) unsigned char shared[];
    T* xs = reinterpret_cast<T*>(shared);  // [M, K]
    pdlAllowNext();
    if (earlyWait & 2) pdlWaitForPrevious();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int column0 = (blockIdx.x * kWarps + warp) * kColumnsPerWarp;
    const uint4* rows[kColumnsPerWarp];
#pragma unroll
    for (int c = 0; c < kColumnsPerWarp; ++c)  // idle warps read a valid row and write nothing
        rows[c] = reinterpret_cast<const uint4*>(w + int64_t(min(column0 + c, N - 1)) * K);
    const int vectors = K / 8;  // 16-byte chunks per weight row

    // Issue the first weight loads before waiting for the previous kernel and filling xs, so
    // their latency overlaps both.
    uint4 current[kUnroll][kColumnsPerWarp];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
        const int v = u * 32 + lane;
#pragma unroll
        for (int c = 0; c < kColumnsPerWarp; ++c)
            current[u][c] = v < vectors ? __ldg(rows[c] + v) : make_uint4(0, 0, 0, 0);
    }
    PrologueConstants<T, P> constants;
    constants.load(normWeight, K);
    RopeRowInputs ropeIn[kRope ? M : 1];
    if (earlyWait & 4) pdlWaitForPrevious();
    if constexpr (kRope) {
        if (lane == 0 && column0 + 1 < N) {
#pragma unroll
            for (int m = 0; m < M; ++m) ropeIn[m] = ropeRowInputs(rope, m, column0);
        }
    }
    pdlWaitForPrevious();
    // The residual this launch adds to was written by an earlier kernel: read it now, beside the
    // prologue, not as a round trip after the main loop.
    float previous[kColumnsPerWarp][M];
    if (accumulate && lane == 0) {
#pragma unroll
        for (int c = 0; c < kColumnsPerWarp; ++c)
#pragma unroll
            for (int m = 0; m < M; ++m)
                previous[c][m] = column0 + c < N ? toFloat(__ldcg(out + int64_t(m) * N + column0 + c)) : 0.0f;
    }
    fillRows<T, M, P>(x, constants, eps, xs, K);
    __syncthreads();

    float acc[kColumnsPerWarp][M];
#pragma unroll
    for (int c = 0; c < kColumnsPerWarp; ++c)
#pragma unroll
        for (int m = 0; m < M; ++m) acc[c][m] = 0.0f;

    for (int base = 0; base < vectors; base += 32 * kUnroll) {
        uint4 next[kOneRound ? 1 : kUnroll][kColumnsPerWarp];
        if constexpr (!kOneRound) {
            const int nextBase = base + 32 * kUnroll;
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int v = nextBase + u * 32 + lane;
#pragma unroll
                for (int c = 0; c < kColumnsPerWarp; ++c)
                    next[u][c] = v < vectors ? __ldg(rows[c] + v) : make_uint4(0, 0, 0, 0);
            }
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
        if constexpr (!kOneRound) {
#pragma unroll
            for (int u = 0; u < kUnroll; ++u)
#pragma unroll
                for (int c = 0; c < kColumnsPerWarp; ++c) current[u][c] = next[u][c];
        }
    }
#pragma unroll
    for (int c = 0; c < kColumnsPerWarp; ++c)
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2) acc[c][m] += __shfl_xor_sync(0xffffffffu, acc[c][m], offset);
    if constexpr (kRope) {
        if (lane == 0 && column0 + 1 < N) {
#pragma unroll
            for (int m = 0; m < M; ++m)
                ropeEpilogue<T>(rope, ropeIn[m], m, column0, fromFloat<T>(acc[0][m]), fromFloat<T>(acc[1][m]));
        }
        return;
    }
    if (lane == 0) {
#pragma unroll
        for (int c = 0; c < kColumnsPerWarp; ++c) {
            const int column = column0 + c;
            if (column >= N) break;
#pragma unroll
            for (int m = 0; m < M; ++m) {
                out[int64_t(m) * N + column] = fromFloat<Out>(acc[c][m] + (accumulate ? previous[c][m] : 0.0f));
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
    const SkinnyRope* rope;
};

template <typename T, typename Out, int M, SkinnyPrologue P, int kColumnsPerWarp, bool kRope>
void launchColumns(const Launch& l)
{
    const int columnsPerBlock = kWarps * kColumnsPerWarp;
    const int blocks = (l.N + columnsPerBlock - 1) / columnsPerBlock;
    const size_t sharedBytes = size_t(M) * l.K * sizeof(T);
    auto kernel = skinny_gemm_kernel<T, M, Out, P, kColumnsPerWarp, kRope, false>;
    if constexpr (M <= 2 && kColumnsPerWarp == 2) {
        if (l.K / 8 <= 32 * kUnroll) kernel = skinny_gemm_kernel<T, M, Out, P, kColumnsPerWarp, kRope, true>;
    }
    if (sharedBytes > 48 * 1024)
        BROOK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
    launchDependent(kernel, dim3(blocks), dim3(kWarps * 32), sharedBytes, l.stream, l.x, static_cast<const T*>(l.w),
                    static_cast<Out*>(l.out), l.N, l.K, l.accumulate, static_cast<const T*>(l.normWeight), l.eps,
                    l.rope ? *l.rope : SkinnyRope{}, pdlEarlyWait());
}

template <typename T, typename Out, int M, SkinnyPrologue P>
void launchRows(const Launch& l)
{
    if constexpr (std::is_same_v<Out, T> && P == SkinnyPrologue::RmsNorm) {
        if (l.rope) return launchColumns<T, Out, M, P, 2, true>(l);
    }
    if (l.N <= kNarrowN) launchColumns<T, Out, M, P, 1, false>(l);
    else launchColumns<T, Out, M, P, 2, false>(l);
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

}  // namespace

bool skinny_gemm_supported(int M, int K) { return M >= 1 && M <= kSkinnyMaxRows && K % 8 == 0 && K <= kMaxK; }

bool skinny_gemm_preferred(int M, int K)
{
    const int override = skinnyMaxRowsOverride();
    return skinny_gemm_supported(M, K) && M <= (override ? override : kSkinnyPreferredMaxRows);
}

void launch_skinny_gemm(const void* x, const void* w, void* out, int M, int N, int K, ElementType type, bool outFloat,
                        bool accumulate, cudaStream_t stream, SkinnyPrologue prologue, const void* normWeight,
                        float eps, const SkinnyRope* rope)
{
    if (!skinny_gemm_supported(M, K)) throw CudaError("skinny GEMM: unsupported shape");
    if (prologue == SkinnyPrologue::RmsNorm && !normWeight) throw CudaError("skinny GEMM: RmsNorm needs a weight");
    if (rope && (prologue != SkinnyPrologue::RmsNorm || outFloat || accumulate || rope->headDim % 2 ||
                 N != (rope->numHeads + 2 * rope->numKvHeads) * rope->headDim))
        throw CudaError("skinny GEMM: the RoPE epilogue needs the RmsNorm prologue, element-type output and "
                        "N = (NH + 2 KVH) * HD");
    const Launch l{x, w, out, N, K, accumulate, normWeight, eps, stream, rope};
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        if (outFloat) dispatchPrologue<E, float>(M, prologue, l);
        else dispatchPrologue<E, E>(M, prologue, l);
    });
}

}  // namespace brook::cuda
