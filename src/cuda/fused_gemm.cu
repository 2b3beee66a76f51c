// Fused GEMM for short steps (see fused_gemm.h for what and why).
// A CTA (warps as 2 or 4 (M) x 2 (N)) owns BM rows x 64 columns of the output and one K range of
// its cluster. K advances 64 at a time through a 4-stage cp.async pipeline of x and w tiles; each
// warp multiplies its 16 or 32 rows x 32 columns with mma.sync m16n8k16 (fp32 accumulators), the
// operands through ldmatrix from rows padded by 16 bytes (bank-conflict free). The accumulators
// then go to shared memory as an fp32 tile (over the pipeline's stages, no longer needed); after a
// cluster barrier, CTA `rank` adds up rows rank, rank + splits, ... of the tile from every peer's
// shared memory in rank order and runs the epilogue on them.
// BM is 32, 64 or 128 (the fewest that cover M, 128 past it): a 17-row step does not multiply
// 128 rows. Each warp runs a long chain of dependent instructions and an SM holds few warps (ncu
// at 128 rows: ~5 warps an SM, one instruction every ~5 cycles a warp), so the cost per row is
// far above cuBLASLt's Hopper kernels: the backend sends only steps of up to
// kFusedGemmPreferredMaxRows here.
// PDL: the weight tiles of the first stages are requested before griddepcontrol.wait (weights
// are constant), x after it; x and the residual go through cp.async.cg / __ldcg (L2), as
// pdl.cuh requires of data an earlier kernel wrote.
#include "cuda/fused_gemm.h"

#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_features.h"
#include "cuda/paged_attention_common.cuh"  // mma16816, ldmatrixX4, pack2, copy16, copyCommit, copyWait
#include "cuda/pdl.cuh"
#include "cuda/rope_epilogue.cuh"
#include "cuda/silu_times.cuh"

#include <cooperative_groups.h>

#include <string>

namespace brook::cuda {

namespace {

using attn::copy16;
using attn::copyCommit;
using attn::copyWait;
using attn::ldmatrixX4;
using attn::mma16816;
using attn::pack2;

constexpr int kBN = 64, kBK = 64, kStages = 4;
// Warps along M (two along N): each warp owns BM / warpsM rows (16 or 32) x 32 columns.
template <int BM>
constexpr int warpsM()
{
    return BM >= 64 ? 4 : 2;
}
template <int BM>
constexpr int threadsFor()
{
    return warpsM<BM>() * 2 * 32;
}
constexpr int kMaxSplits = 8;        // portable cluster size
constexpr int kStride = kBK + 8;     // elements per shared-memory tile row
constexpr int kAccStride = kBN + 8;  // floats per row of the fp32 result tile (float2 stores conflict-free)
constexpr int kPairs = kBN / 2;      // column pairs per tile row

template <int BM>
constexpr int stageElements()
{
    return (BM + kBN) * kStride;  // x tile [BM][kStride], then w tile [kBN][kStride]
}

template <typename T, int BM>
constexpr int sharedBytes()
{
    constexpr int stages = kStages * stageElements<BM>() * int(sizeof(T));
    constexpr int result = BM * kAccStride * int(sizeof(float));
    return stages > result ? stages : result;
}

struct FusedArgs {
    int M, N, K;
    int kTiles;  // 64-wide K tiles each CTA multiplies (K / 64 / splits)
    int splits;  // CTAs of a cluster, one K range each
    int ldo;     // elements per row of out
    SkinnyRope rope;
};

// Weight row behind row r of column tile `tile`'s shared-memory w tile. SiluMul pairs the
// tile's 32 gate rows with the 32 up rows of the same output columns.
template <FusedEpilogue E>
__device__ inline int weightRow(int tile, int r, int N)
{
    if constexpr (E == FusedEpilogue::SiluMul) {
        constexpr int half = kBN / 2;
        return (r < half ? 0 : N / 2) + tile * half + r % half;
    } else {
        return tile * kBN + r;
    }
}

template <typename T, int BM, FusedEpilogue E>
__device__ inline void loadWeights(const T* __restrict__ w, const FusedArgs& a, int tile, int kt, T* ws)
{
    constexpr int kChunks = kBK / 8;  // 16-byte chunks per row
    constexpr int kThreads = threadsFor<BM>();
#pragma unroll
    for (int i = 0; i < kBN * kChunks / kThreads; ++i) {
        const int idx = int(threadIdx.x) + i * kThreads;
        const int r = idx / kChunks, c = idx % kChunks;
        copy16(ws + r * kStride + c * 8, w + int64_t(weightRow<E>(tile, r, a.N)) * a.K + kt * kBK + c * 8, true);
    }
}

// Rows past M are zero-filled and never stored.
template <typename T, int BM>
__device__ inline void loadRows(const T* __restrict__ x, const FusedArgs& a, int m0, int kt, T* xs)
{
    constexpr int kChunks = kBK / 8;
    constexpr int kThreads = threadsFor<BM>();
#pragma unroll
    for (int i = 0; i < BM * kChunks / kThreads; ++i) {
        const int idx = int(threadIdx.x) + i * kThreads;
        const int r = idx / kChunks, c = idx % kChunks;
        const bool valid = m0 + r < a.M;
        copy16(xs + r * kStride + c * 8, valid ? x + int64_t(m0 + r) * a.K + kt * kBK + c * 8 : x, valid);
    }
}

// acc[i][j]: the warp's m16 tile i and n8 tile j.
template <typename T, int BM>
__device__ inline void multiplyTile(const T* stage, float (&acc)[BM / 16 / warpsM<BM>()][4][4], int warpM, int warpN,
                                    int lane)
{
    constexpr int MI = BM / 16 / warpsM<BM>();  // m16 tiles per warp
    const T* xs = stage;
    const T* ws = stage + BM * kStride;
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
        uint32_t a[MI][4];
#pragma unroll
        for (int i = 0; i < MI; ++i)
            ldmatrixX4(a[i], xs + (warpM * MI * 16 + i * 16 + (lane & 15)) * kStride + kk * 16 + (lane >> 4) * 8);
        // One x4 load gives b0, b1 of n8 tiles 2p and 2p + 1: lanes 0-7 address k 0-7 of tile 2p's
        // rows, 8-15 its k 8-15, 16-31 the same for tile 2p + 1.
        uint32_t b[2][4];
#pragma unroll
        for (int p = 0; p < 2; ++p)
            ldmatrixX4(b[p], ws + (warpN * 32 + p * 16 + (lane & 7) + ((lane >> 4) << 3)) * kStride + kk * 16 +
                                 ((lane >> 3) & 1) * 8);
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                mma16816<T>(acc[i][j], a[i], b[j >> 1][(j & 1) * 2], b[j >> 1][(j & 1) * 2 + 1]);
    }
}

// What a pair's epilogue reads from global memory besides the sums (the residual it adds to, the
// row's RoPE inputs), requested before the partial sums so that both round trips overlap.
struct PairInputs {
    float2 old;
    RopeRowInputs rope;
};

template <FusedEpilogue E>
__device__ inline PairInputs pairInputs(const FusedArgs& a, const void* out, int tile, int m, int p)
{
    PairInputs in{};
    if constexpr (E == FusedEpilogue::AddToFloat)
        in.old = __ldcg(
            reinterpret_cast<const float2*>(static_cast<const float*>(out) + int64_t(m) * a.ldo + tile * kBN + 2 * p));
    else if constexpr (E == FusedEpilogue::RopeCache) in.rope = ropeRowInputs(a.rope, m, tile * kBN + 2 * p);
    return in;
}

// The epilogue of one pair of result columns (2p, 2p + 1 of the tile) of row m; v = the pair's
// sum over the splits. SiluMul passes the up pair (columns 2p + 32, 2p + 33) in `up`.
template <typename T, FusedEpilogue E>
__device__ inline void finishPair(const FusedArgs& a, void* out, int tile, int m, int p, float2 v, float2 up,
                                  const PairInputs& in)
{
    if constexpr (E == FusedEpilogue::Store) {
        *reinterpret_cast<uint32_t*>(static_cast<T*>(out) + int64_t(m) * a.ldo + tile * kBN + 2 * p) =
            pack2<T>(v.x, v.y);
    } else if constexpr (E == FusedEpilogue::AddToFloat) {
        *reinterpret_cast<float2*>(static_cast<float*>(out) + int64_t(m) * a.ldo + tile * kBN + 2 * p) =
            make_float2(in.old.x + v.x, in.old.y + v.y);
    } else if constexpr (E == FusedEpilogue::SiluMul) {
        const T r0 = siluTimes(fromFloat<T>(v.x), fromFloat<T>(up.x));
        const T r1 = siluTimes(fromFloat<T>(v.y), fromFloat<T>(up.y));
        T* dst = static_cast<T*>(out) + int64_t(m) * a.ldo + tile * (kBN / 2) + 2 * p;
        dst[0] = r0;
        dst[1] = r1;
    } else {
        const int column = tile * kBN + 2 * p;
        ropeEpilogue<T>(a.rope, in.rope, m, column, fromFloat<T>(v.x), fromFloat<T>(v.y));
    }
}

// Rows split, split + splits, ... of the tile are this CTA's to finish, from the partial tiles of
// `peers` (this CTA's own when there is one split). Each thread finishes kItems pairs at a time
// and requests every load of them (peers' partials, epilogue inputs) before using any: these are
// shared-memory round trips to other SMs, and one at a time they took longer than the GEMM.
template <typename T, int BM, FusedEpilogue E>
__device__ inline void finishRows(const FusedArgs& a, void* out, int tile, int m0, int rows, int split,
                                  const float* const (&peers)[kMaxSplits])
{
    constexpr int kItems = 2;
    constexpr int kThreads = threadsFor<BM>();
    constexpr bool silu = E == FusedEpilogue::SiluMul;
    constexpr int pairsPerRow = silu ? kPairs / 2 : kPairs;  // SiluMul reads the up pair with each gate pair
    const int myRows = (rows - split + a.splits - 1) / a.splits;
    const int items = myRows * pairsPerRow;
    for (int first = int(threadIdx.x); first < items; first += kThreads * kItems) {
        int r[kItems], p[kItems];
        PairInputs in[kItems];
        float2 part[kItems][kMaxSplits], upPart[kItems][silu ? kMaxSplits : 1];
#pragma unroll
        for (int u = 0; u < kItems; ++u) {
            const int idx = first + u * kThreads;
            r[u] = split + idx / pairsPerRow * a.splits;
            p[u] = idx % pairsPerRow;
            if (idx < items) in[u] = pairInputs<E>(a, out, tile, m0 + r[u], p[u]);
#pragma unroll
            for (int s = 0; s < kMaxSplits; ++s) {
                if (idx >= items || s >= a.splits) continue;
                const float* row = peers[s] + r[u] * kAccStride;
                part[u][s] = *reinterpret_cast<const float2*>(row + 2 * p[u]);
                if constexpr (silu) upPart[u][s] = *reinterpret_cast<const float2*>(row + kBN / 2 + 2 * p[u]);
            }
        }
#pragma unroll
        for (int u = 0; u < kItems; ++u) {
            if (first + u * kThreads >= items) continue;
            float2 v = make_float2(0.0f, 0.0f), up = v;
#pragma unroll
            for (int s = 0; s < kMaxSplits; ++s) {  // rank order: the same sum on every run
                if (s >= a.splits) continue;
                v.x += part[u][s].x;
                v.y += part[u][s].y;
                if constexpr (silu) {
                    up.x += upPart[u][s].x;
                    up.y += upPart[u][s].y;
                }
            }
            finishPair<T, E>(a, out, tile, m0 + r[u], p[u], v, up, in[u]);
        }
    }
}

template <typename T, int BM, FusedEpilogue E>
__global__ void __launch_bounds__(threadsFor<BM>())
    fused_gemm_kernel(const T* __restrict__ x, const T* __restrict__ w, void* __restrict__ out, FusedArgs a)
{
    extern __shared__ __align__(16) unsigned char smem[];
    T* const stages = reinterpret_cast<T*>(smem);
    constexpr int MI = BM / 16 / warpsM<BM>();
    const int tile = int(blockIdx.x), split = int(blockIdx.y), m0 = int(blockIdx.z) * BM;
    const int kt0 = split * a.kTiles;
    const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31;
    const int warpM = warp >> 1, warpN = warp & 1;
    auto stage = [&](int s) { return stages + s * stageElements<BM>(); };

    pdlAllowNext();
    // Weights are constant: their first tiles are on their way while the previous kernel drains.
    // They join the first commit group below.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s)
        if (s < a.kTiles) loadWeights<T, BM, E>(w, a, tile, kt0 + s, stage(s) + BM * kStride);
    pdlWaitForPrevious();
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < a.kTiles) loadRows<T, BM>(x, a, m0, kt0 + s, stage(s));
        copyCommit();
    }

    float acc[MI][4][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;
    for (int i = 0; i < a.kTiles; ++i) {
        copyWait<kStages - 2>();  // tile i landed
        __syncthreads();          // ... for every warp; stage (i - 1) % kStages is free
        const int ahead = i + kStages - 1;
        if (ahead < a.kTiles) {
            loadWeights<T, BM, E>(w, a, tile, kt0 + ahead, stage(ahead % kStages) + BM * kStride);
            loadRows<T, BM>(x, a, m0, kt0 + ahead, stage(ahead % kStages));
        }
        copyCommit();
        multiplyTile<T, BM>(stage(i % kStages), acc, warpM, warpN, lane);
    }
    copyWait<0>();
    __syncthreads();  // every warp is done with the stages the result tile overwrites

    // Lane (g, t) holds rows g, g + 8 and columns 2t, 2t + 1 of each 16 x 8 accumulator tile.
    float* const result = reinterpret_cast<float*>(smem);
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int r = warpM * MI * 16 + i * 16 + g + 8 * half;
                *reinterpret_cast<float2*>(result + r * kAccStride + warpN * 32 + j * 8 + 2 * t) =
                    make_float2(acc[i][j][2 * half], acc[i][j][2 * half + 1]);
            }

    const float* peers[kMaxSplits];
    const int rows = min(BM, a.M - m0);
    if (a.splits == 1) {
        peers[0] = result;
        __syncthreads();
        finishRows<T, BM, E>(a, out, tile, m0, rows, 0, peers);
        return;
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
#pragma unroll
    for (int s = 0; s < kMaxSplits; ++s)
        peers[s] = s < a.splits ? static_cast<const float*>(cluster.map_shared_rank(result, s)) : result;
    cluster.sync();  // every peer's partial tile is in its shared memory
    finishRows<T, BM, E>(a, out, tile, m0, rows, split, peers);
    cluster.sync();  // no CTA leaves while a peer may still read its shared memory
#else
    __trap();  // splits > 1 only where threadBlockClustersSupported(): never code built for older GPUs
#endif
}

// Splits of K (cluster size): the fewest, doubling, whose CTAs cover the SMs, keeping at least two
// K tiles per CTA. One without clusters.
int chooseSplits(int ctas, int kTiles)
{
    if (!threadBlockClustersSupported()) return 1;
    const int sms = multiprocessorCount();
    int splits = 1;
    while (splits < kMaxSplits && ctas * splits < sms && kTiles % (2 * splits) == 0 && kTiles / (2 * splits) >= 2)
        splits *= 2;
    return splits;
}

template <typename T, int BM, FusedEpilogue E>
void launchTiles(const void* x, const void* w, void* out, const FusedArgs& base, cudaStream_t stream)
{
    constexpr int bytes = sharedBytes<T, BM>();
    auto kernel = fused_gemm_kernel<T, BM, E>;
    static const bool configured = [&] {
        BROOK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        return true;
    }();
    (void)configured;
    FusedArgs a = base;
    const int tiles = a.N / kBN;  // SiluMul too: 32 gate + 32 up weight rows a tile
    const int mTiles = (a.M + BM - 1) / BM;
    const int kTiles = a.K / kBK;
    a.splits = chooseSplits(tiles * mTiles, kTiles);
    a.kTiles = kTiles / a.splits;
    launchDependentClustered(dim3(1, unsigned(a.splits), 1), kernel,
                             dim3(unsigned(tiles), unsigned(a.splits), unsigned(mTiles)), dim3(threadsFor<BM>()),
                             size_t(bytes), stream, static_cast<const T*>(x), static_cast<const T*>(w), out, a);
}

template <typename T, FusedEpilogue E>
void launchRows(const void* x, const void* w, void* out, const FusedArgs& a, cudaStream_t stream)
{
    if (a.M <= 32) launchTiles<T, 32, E>(x, w, out, a, stream);
    else if (a.M <= 64) launchTiles<T, 64, E>(x, w, out, a, stream);
    else launchTiles<T, 128, E>(x, w, out, a, stream);
}

}  // namespace

bool fused_gemm_supported(int M, int N, int K)
{
    // Every epilogue takes the same shapes: SiluMul's 32 + 32 columns a tile need only N % 64.
    return M >= 1 && M <= kFusedGemmMaxRows && N > 0 && N % kBN == 0 && K > 0 && K % kBK == 0;
}

bool fused_gemm_preferred(int M, int N, int K)
{
    static const bool ampere = cudaDeviceHasBf16();  // sm_80+: cp.async, bf16 mma (one device a process)
    return ampere && M <= kFusedGemmPreferredMaxRows && cudaFeatures().fusedGemm && fused_gemm_supported(M, N, K);
}

void launch_fused_gemm(const void* x, const void* w, void* out, int M, int N, int K, ElementType type,
                       FusedEpilogue epilogue, cudaStream_t stream, const SkinnyRope* rope)
{
    const bool ropeOk =
        epilogue != FusedEpilogue::RopeCache ||
        (rope && rope->headDim % 2 == 0 && N == (rope->numHeads + 2 * rope->numKvHeads) * rope->headDim);
    if (!fused_gemm_supported(M, N, K) || !ropeOk)
        throw CudaError("launch_fused_gemm: unsupported shape (M " + std::to_string(M) + ", N " + std::to_string(N) +
                        ", K " + std::to_string(K) + ")");
    FusedArgs a{};
    a.M = M;
    a.N = N;
    a.K = K;
    a.ldo = epilogue == FusedEpilogue::SiluMul ? N / 2 : N;
    if (rope) a.rope = *rope;
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        switch (epilogue) {
        case FusedEpilogue::Store: launchRows<E, FusedEpilogue::Store>(x, w, out, a, stream); break;
        case FusedEpilogue::AddToFloat: launchRows<E, FusedEpilogue::AddToFloat>(x, w, out, a, stream); break;
        case FusedEpilogue::SiluMul: launchRows<E, FusedEpilogue::SiluMul>(x, w, out, a, stream); break;
        case FusedEpilogue::RopeCache: launchRows<E, FusedEpilogue::RopeCache>(x, w, out, a, stream); break;
        }
    });
}

}  // namespace brook::cuda
