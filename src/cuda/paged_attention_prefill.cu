// Paged attention for prefill and chunked prefill: flash-attention style, tensor cores, fp32
// online softmax. Reference: brook::cpu::pagedAttention; test: tests/cuda/test_paged_attention.cpp.
//
// Shapes: q [T, NH, HD] (rows qTokenStride apart), out [T, NH, HD], k/v cache [B, BS, KVH, HD].
// GQA packing: the n_s * G query rows of sequence s that share kv head kvh are laid out as
// R = i * G + hg (token i, head kvh * G + hg) and cut into CTA tiles of 64 rows, so each K/V
// tile loaded into shared memory serves all G heads of the group (ERNIE: 8 tokens x 8 heads).
// Row R sits at position p = contextLens[s] - n_s + R / G and attends to keys 0..p.
// Grid: (ceil(maxQueryLen * G / 64), KVH, numSeqs), 4 warps of 16 rows each; tiles past a
// sequence's rows exit at once. Tiles are visited last-first so the longest (deepest) start first.
// A sequence with contextLens[s] < n_s (e.g. a padding slot with context 0) gets zero output.
// Key tiles stream through kStages K and kStages V buffers (cp.async on sm_80+): tile i computes
// while tiles i + 1 .. i + kStages - 1 are in flight, and its buffers are refilled with tile
// i + kStages as soon as every warp is done with them.
// Split-KV (PrefillSplit): when the query tiles are too few to fill the GPU, as when a prefix-cache
// hit leaves one short chunk over a long cached history (83 tokens x 8 heads over 1,800 keys are 22
// CTAs on 132 SMs, each walking 29 key tiles), grid.z also cuts each tile's keys into `splits`
// ranges, as many as fill one wave of the GPU (paged_attention_prefill_splits). Each CTA writes
// its rows' unnormalised output and softmax state (m, l) to the workspace, and a second kernel
// merges the ranges (flash-decoding's scheme, applied to prefill tiles). On sm_90 with up to
// kMaxClusterSplits ranges whose clusters all fit the GPU at once, a tile's ranges run as one
// thread-block cluster instead: each CTA leaves its rows' normalised output and log-sum-exp in its
// own shared memory (the K/V tiles' buffers, done with by then), and after a cluster barrier each
// merges a share of the tile's rows by reading its peers' (distributed shared memory). No fp32
// partials go through L2 (at 83 tokens ~7 MB a layer, 4x the cached K/V) and no merge kernel
// launches (18 a step).
// Split launches run both kernels as programmatic dependents (pdl.cuh) when
// CudaFeatures::pdlPrefillKernels (see launchPrefill for why only those). The attention kernel reads only host-uploaded step inputs before its wait, and, when its first
// kStages key tiles all lie before the sequence's new tokens (the cached history, which no kernel
// of this step writes: RoPE writes the new tokens' slots only), issues their loads there too, so
// a prefix-cache hit's CTAs start streaming the history while the RoPE kernel still runs. q, the
// new tokens' K/V and the merge's partials are read after the wait, through L2.
#include "cuda/paged_attention.h"
#include "cuda/paged_attention_common.cuh"

#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/pdl.cuh"

#include <algorithm>
#include <array>
#include <string>

namespace brook::cuda {
namespace {

using namespace attn;

constexpr int kRowsPerCta = 64;
constexpr int kMaxPrefillSplits = 16;
// Ranges merged inside one thread-block cluster: the portable cluster size. Non-portable clusters
// of up to 16 (H200) were tried: the occupancy query let 128-token steps take 11-13 ranges, and
// those steps ran 16-18% slower than with 8 (docs/benchmarks.md).
constexpr int kMaxClusterSplits = 8;

constexpr int kMinTilesPerSplit = 4;
// CTAs of the kernel resident on one SM (H200, head dim 128: 70 KB of K/V tiles allow 3, and the
// launch bounds hold registers to the 168 a thread that 3 allow; ncu's occupancy section). Left
// to itself ptxas took 172 once the tile loads shuffled their block-table entries: an SM then
// holds 2, and a variant at 173 (2026-12-04) ran 128-token steps over 1,717 cached 14% slower, as
// the cluster plan lost ranges.
constexpr int kResidentCtasPerSm = 3;
// K/V tiles in flight per CTA: with one (load tile i + 1 while tile i computes) a CTA waited out
// most of each load, with few CTAs per SM to hide it (the split kernel over a long cached history
// issued an instruction every 5.5 cycles per warp). Two: 1-16% faster steps over 1,717 cached
// tokens, 1-3% on long prompts (docs/benchmarks.md).
constexpr int kStages = 2;

template <typename T, int HD>
constexpr size_t kvTileBytes()
{
    return size_t(2 * kStages * kTileKeys * smemStride<HD>()) * sizeof(T);
}

// A partial of one (token, head, split): HD output sums, then m (log2 domain) and l.
template <int HD>
constexpr int partialFloats()
{
    return HD + 2;
}

// Cluster merge: a CTA's rows as the merge reads them, fp32 [64][HD + 4] (the pad spreads the
// lanes' float2 stores over the banks), then each row's log-sum-exp (log2 domain; -inf: no keys).
template <int HD>
constexpr int clusterRowStride()
{
    return HD + 4;
}
template <int HD>
constexpr size_t clusterMergeBytes()
{
    return size_t(kRowsPerCta) * (clusterRowStride<HD>() + 1) * sizeof(float);
}

// The cluster merge (ClusterMerge launches; every CTA of the cluster calls it): this CTA's rows,
// normalised by their own l, and their log-sum-exp M + log2 L go to its shared memory; after the
// barrier CTA `rank` merges items rank, rank + size, ... of the tile's (row, dim pair) items:
// out = sum_s 2^(lse_s - max) o_s / sum_s 2^(lse_s - max), ranges with no key weighing nothing, and
// rows no range saw (a padding sequence) zero. Needs every warp done with the K/V buffers.
template <typename T, int HD>
__device__ inline void clusterMergeRows(const WarpState<HD>& st, float l0, float l1, unsigned char* tileMemory,
                                        T* __restrict__ out, int qBegin, int rowBegin, int rows, int G, int numHeads,
                                        int kvh, int clusterSize)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    constexpr int RS = clusterRowStride<HD>();
    float* const ctaO = reinterpret_cast<float*>(tileMemory);  // [64][RS]
    float* const ctaLse = ctaO + kRowsPerCta * RS;             // [64]
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    __syncthreads();  // every warp is done reading the K/V tiles this overwrites
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int r = warp * 16 + g + 8 * half;
        const float l = half == 0 ? l0 : l1;
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
        for (int nt = 0; nt < HD / 8; ++nt)
            *reinterpret_cast<float2*>(ctaO + r * RS + nt * 8 + 2 * t) =
                make_float2(st.o[nt][2 * half] * inv, st.o[nt][2 * half + 1] * inv);
        if (t == 0) ctaLse[r] = l > 0.0f ? st.m[half] + log2f(l) : -INFINITY;
    }
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();  // every peer's rows are in its shared memory
    const int rank = int(cluster.block_rank());
    const int nRows = min(kRowsPerCta, rows - rowBegin);
    for (int idx = rank * kThreads + int(threadIdx.x); idx < nRows * (HD / 2); idx += clusterSize * kThreads) {
        const int r = idx / (HD / 2), d = (idx % (HD / 2)) * 2;
        const float2 merged = mergeClusterPeers<kMaxClusterSplits>(cluster, ctaLse + r, ctaO + r * RS + d, clusterSize);
        const int R = rowBegin + r;
        const int64_t token = qBegin + R / G;
        *reinterpret_cast<uint32_t*>(out + (token * numHeads + kvh * G + R % G) * HD + d) =
            pack2<T>(merged.x, merged.y);
    }
    cluster.sync();  // no CTA leaves while a peer may still read its shared memory
#endif
}

// Split: grid.z = numSeqs * splits and the CTA's rows go to `partials` (fp32 [T, NH, splits,
// HD + 2]) instead of `out`; splits is 1 otherwise. ClusterMerge (with Split): the `splits` CTAs of
// a tile form one cluster and merge in shared memory; `partials` is not used.
template <typename T, int HD, bool Split, bool ClusterMerge>
__global__ void __launch_bounds__(kThreads, kResidentCtasPerSm)
    paged_attention_prefill_kernel(const T* __restrict__ q, T* __restrict__ out, const T* __restrict__ kCache,
                                   const T* __restrict__ vCache, const int32_t* __restrict__ queryStart,
                                   const int32_t* __restrict__ contextLens, const int32_t* __restrict__ blockTables,
                                   int maxBlocksPerSeq, int numHeads, int numKvHeads, int blockShift, int qTokenStride,
                                   float scaleLog2, float* __restrict__ partials, int splits, bool earlyHistory)
{
    constexpr int S = smemStride<HD>();
    extern __shared__ __align__(16) unsigned char tileMemory[];
    T* const ks = reinterpret_cast<T*>(tileMemory);  // kStages K tiles, then kStages V tiles
    T* const vs = ks + kStages * kTileKeys * S;

    const int seq = Split ? blockIdx.z / splits : blockIdx.z, kvh = blockIdx.y;
    const int split = Split ? blockIdx.z % splits : 0;
    const int tile = gridDim.x - 1 - blockIdx.x;
    const int G = numHeads / numKvHeads;
    const int qBegin = queryStart[seq];
    const int n = queryStart[seq + 1] - qBegin;
    const int start = contextLens[seq] - n;  // position of the sequence's first new token
    const int rows = n * G;
    const int rowBegin = tile * kRowsPerCta;
    if (rowBegin >= rows) return;
    if (!Split && start < 0) {  // malformed or padded (context shorter than its queries): zeros, no cache reads
        pdlWaitForPrevious();   // out may still be read by the kernel before (an eager step's o GEMM)
        for (int i = threadIdx.x; i < kRowsPerCta * HD; i += kThreads) {
            const int R = rowBegin + i / HD;
            if (R < rows)
                out[((int64_t(qBegin) + R / G) * numHeads + kvh * G + R % G) * HD + i % HD] = fromFloat<T>(0.0f);
        }
        return;
    }

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2;
    const int lastRow = min(rowBegin + kRowsPerCta, rows) - 1;
    const int keyEnd = start + lastRow / G + 1;  // keys the CTA's deepest row sees
    const int numTiles = start < 0 ? 0 : (keyEnd + kTileKeys - 1) / kTileKeys;
    // This CTA's key tiles: all of them, or its split's share (possibly none: it then writes an
    // empty state, m = -inf and l = 0, which the merge weighs as nothing).
    const int perSplit = (numTiles + splits - 1) / splits;
    const int tileBegin = min(split * perSplit, numTiles), tileEnd = min(tileBegin + perSplit, numTiles);
    const int32_t* blockTable = blockTables + int64_t(seq) * maxBlocksPerSeq;

    // Tile i lives in buffer i % kStages. The first kStages K/V tiles in flight (one commit group
    // each, empty past the end, so the waits below count the same in every CTA), then this lane's
    // Q rows (g, g + 8 of the warp) behind them.
    auto kTile = [&](int i) { return ks + (i % kStages) * kTileKeys * S; };
    auto vTile = [&](int i) { return vs + (i % kStages) * kTileKeys * S; };
    auto issueFirstTiles = [&] {
#pragma unroll
        for (int stage = 0; stage < kStages; ++stage) {
            const int i = tileBegin + stage;
            if (i < tileEnd) {
                loadKvTilePair<T, HD>(kTile(i), vTile(i), kCache, vCache, blockTable, i * kTileKeys, keyEnd, blockShift,
                                      numKvHeads, kvh);
            } else {
                copyCommit();
                copyCommit();
            }
        }
    };
    // Tiles [0, start / kTileKeys) hold only keys before the new tokens.
    const bool historyFirst = earlyHistory && min(tileBegin + kStages, tileEnd) <= max(start, 0) / kTileKeys;
    if (historyFirst) issueFirstTiles();
    pdlWaitForPrevious();
    if (!historyFirst) issueFirstTiles();
    const int warpFirstRow = rowBegin + warp * 16;
    auto qRow = [&](int R) -> const T* {
        return R < rows ? q + (qBegin + int64_t(R / G)) * qTokenStride + int64_t(kvh * G + R % G) * HD : nullptr;
    };
    uint32_t qf[HD / 16][4];
    loadQFragments<HD>(qf, qRow(warpFirstRow + g), qRow(warpFirstRow + g + 8));

    // This lane's rows; rows past the sequence borrow the last row's position (never stored).
    const bool warpHasRows = warpFirstRow < rows;
    const int pos0 = start + min(warpFirstRow + g, rows - 1) / G;
    const int pos1 = start + min(warpFirstRow + g + 8, rows - 1) / G;
    const int warpMaxPos = start + min(warpFirstRow + 15, rows - 1) / G;

    WarpState<HD> st;
    st.init();
    float s[kTileKeys / 8][4];
    // Groups in flight at the top of iteration i: K_i, V_i, ..., K_{i+kStages-1}, V_{i+kStages-1}.
    constexpr int kLaterGroups = 2 * kStages - 1;
    for (int i = tileBegin; i < tileEnd; ++i) {
        const int kb = i * kTileKeys;
        const bool active = warpHasRows && kb <= warpMaxPos;
        copyWait<kLaterGroups>();  // K tile i landed (later tiles may still be in flight)
        __syncthreads();
        if (active) scoreTile<T, HD, kTileKeys / 8>(st, s, qf, kTile(i), kb, pos0, pos1, scaleLog2);
        __syncthreads();  // every warp is done with K tile i: its buffer takes K tile i + kStages
        const int nextKb = kb + kStages * kTileKeys;  // the tile these buffers take next
        if (i + kStages < tileEnd)
            copyKvTile<T, HD>(kTile(i), kCache, kvTileBlocks(blockTable, nextKb, keyEnd, blockShift), nextKb, keyEnd,
                              blockShift, numKvHeads, kvh);
        copyCommit();
        copyWait<kLaterGroups>();  // V tile i landed
        __syncthreads();
        if (active) accumulatePv<T, HD, kTileKeys / 8>(st, s, vTile(i));
        __syncthreads();  // every warp is done with V tile i
        if (i + kStages < tileEnd)
            copyKvTile<T, HD>(vTile(i), vCache, kvTileBlocks(blockTable, nextKb, keyEnd, blockShift), nextKb, keyEnd,
                              blockShift, numKvHeads, kvh);
        copyCommit();
    }
    copyWait<0>();
    pdlAllowNext();  // the merge (or the o GEMM) may launch while the rows are stored

    // Normalise and store: lane (g, t) holds dims 8n + 2t, 8n + 2t + 1 of rows g and g + 8.
    float l0 = st.l[0], l1 = st.l[1];
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const int t = lane & 3;
    if constexpr (ClusterMerge) {
        clusterMergeRows<T, HD>(st, l0, l1, tileMemory, out, qBegin, rowBegin, rows, G, numHeads, kvh, splits);
    } else {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int R = warpFirstRow + g + 8 * half;
            if (R >= rows) continue;
            const int64_t token = qBegin + R / G;
            const int head = kvh * G + R % G;
            if constexpr (Split) {  // unnormalised, with the row's state, for the merge
                float* dst = partials + ((token * numHeads + head) * splits + split) * partialFloats<HD>();
#pragma unroll
                for (int nt = 0; nt < HD / 8; ++nt)
                    *reinterpret_cast<float2*>(dst + nt * 8 + 2 * t) =
                        make_float2(st.o[nt][2 * half], st.o[nt][2 * half + 1]);
                if (t == 0) {
                    dst[HD] = st.m[half];
                    dst[HD + 1] = half == 0 ? l0 : l1;
                }
            } else {
                const float inv = 1.0f / (half == 0 ? l0 : l1);
                T* dst = out + (token * numHeads + head) * HD + 2 * t;
#pragma unroll
                for (int nt = 0; nt < HD / 8; ++nt)
                    *reinterpret_cast<uint32_t*>(dst + nt * 8) =
                        pack2<T>(st.o[nt][2 * half] * inv, st.o[nt][2 * half + 1] * inv);
            }
        }
    }
}

// Merges the split partials of one (token, head) per warp: out = sum_s w_s o_s / sum_s w_s l_s with
// w_s = 2^(m_s - max m). A row no split saw (a padding sequence) has every l_s = 0: zeros.
template <typename T, int HD>
__global__ void __launch_bounds__(kThreads)
    merge_prefill_splits_kernel(const float* __restrict__ partials, T* __restrict__ out, int numRows, int splits)
{
    constexpr int kPerLane = HD / 32;
    pdlAllowNext();
    pdlWaitForPrevious();
    const int row = blockIdx.x * (kThreads / 32) + int(threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= numRows) return;
    const float* first = partials + int64_t(row) * splits * partialFloats<HD>();
    float m = -INFINITY;
    for (int s = 0; s < splits; ++s) m = fmaxf(m, __ldcg(first + s * partialFloats<HD>() + HD));
    float acc[kPerLane] = {}, l = 0.0f;
    for (int s = 0; s < splits; ++s) {
        const float* p = first + s * partialFloats<HD>();
        const float ms = __ldcg(p + HD);
        if (ms == -INFINITY) continue;  // a range with no key for this row
        const float w = exp2f(ms - m);
        l += w * __ldcg(p + HD + 1);
#pragma unroll
        for (int k = 0; k < kPerLane; ++k) acc[k] += w * __ldcg(p + lane + 32 * k);
    }
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) out[int64_t(row) * HD + lane + 32 * k] = fromFloat<T>(acc[k] * inv);
}

// The kernels' dynamic shared memory (the K/V tiles), opted in above 48 KB once per instantiation
// (one device per process), not per launch: an eager prefill step launches this 18 times.
template <typename T, int HD>
int optInSharedMemory()
{
    static_assert(clusterMergeBytes<HD>() <= kvTileBytes<T, HD>(), "the cluster merge reuses the K/V tile buffers");
    constexpr int kBytes = int(kvTileBytes<T, HD>());
    static const bool optedIn = [] {
        if (kBytes > 48 * 1024)
            for (auto* k :
                 {paged_attention_prefill_kernel<T, HD, true, true>, paged_attention_prefill_kernel<T, HD, true, false>,
                  paged_attention_prefill_kernel<T, HD, false, false>})
                BROOK_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes));
        return true;
    }();
    (void)optedIn;
    return kBytes;
}

// Clusters of `size` merging CTAs the GPU holds at once (cudaOccupancyMaxActiveClusters: a cluster's
// CTAs must share one GPC, so this can be fewer than the SMs' CTA slots over `size`). Asked once
// per size (one device per process); bf16 and fp16 instantiations use the same resources.
template <int HD>
int residentClusters(int size)
{
    static const std::array<int, kMaxClusterSplits + 1> bySize = [] {
        std::array<int, kMaxClusterSplits + 1> counts{};
        auto* kernel = paged_attention_prefill_kernel<__nv_bfloat16, HD, true, true>;
        const int sharedBytes = optInSharedMemory<__nv_bfloat16, HD>();
        for (int s = 2; s <= kMaxClusterSplits; ++s) {
            cudaLaunchConfig_t config{};
            config.gridDim = dim3(1, 1, unsigned(s));
            config.blockDim = dim3(kThreads);
            config.dynamicSmemBytes = size_t(sharedBytes);
            cudaLaunchAttribute attribute{};
            attribute.id = cudaLaunchAttributeClusterDimension;
            attribute.val.clusterDim.x = 1;
            attribute.val.clusterDim.y = 1;
            attribute.val.clusterDim.z = unsigned(s);
            config.attrs = &attribute;
            config.numAttrs = 1;
            int clusters = 0;
            if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
                (void)cudaGetLastError();  // not fatal: that size is then not used
                clusters = 0;
            }
            counts[size_t(s)] = clusters;
        }
        return counts;
    }();
    return size >= 2 && size <= kMaxClusterSplits ? bySize[size_t(size)] : 0;
}

int residentClustersFor(int headDim, int size)
{
    switch (headDim) {
    case 32: return residentClusters<32>(size);
    case 64: return residentClusters<64>(size);
    case 128: return residentClusters<128>(size);
    default: return 0;
    }
}

struct SplitPlan {
    int splits = 1;
    bool clusterMerge = false;
};

// How a launch splits its keys; see paged_attention_prefill_splits.
SplitPlan planPrefillSplit(int numSeqs, int maxQueryLen, const AttentionShape& shape, const PrefillSplit& split)
{
    if (numSeqs <= 0 || maxQueryLen <= 0 || split.numTokens <= 0 || !split.workspace || shape.numHeads <= 0 ||
        shape.numKvHeads <= 0 || shape.headDim <= 0 || shape.numHeads % shape.numKvHeads != 0)
        return {};
    const int sms = multiprocessorCount();
    const int G = shape.numHeads / shape.numKvHeads;
    // CTAs with rows to compute. The grid is numSeqs x ceil(maxQueryLen * G / 64) tiles per kv head,
    // but a tile past its sequence's rows exits at once, and the sequences share numTokens: a
    // captured prefill graph's layout (one sequence of up to T tokens and a padding one, both sized
    // T) has about half its grid idle.
    const int64_t tilesPerHead =
        std::min(int64_t(numSeqs) * ((int64_t(maxQueryLen) * G + kRowsPerCta - 1) / kRowsPerCta),
                 (int64_t(split.numTokens) * G + kRowsPerCta - 1) / kRowsPerCta + numSeqs - 1);
    const int64_t ctas = tilesPerHead * shape.numKvHeads;
    // Each range at least kMinTilesPerSplit key tiles (the partials' write and merge cost about one
    // tile's work), and the grid within its z limit.
    const int64_t keyTiles = (int64_t(split.maxContextLen) + kTileKeys - 1) / kTileKeys;
    const int64_t byKeys = keyTiles / kMinTilesPerSplit;
    const int64_t byGrid = 65535 / numSeqs;
    // Cluster merge: the most ranges, up to a cluster's 8, whose clusters (one per tile with rows)
    // the GPU holds at once. A second wave costs a whole range's time: 256 tokens over 1,717 keys in
    // clusters of 6 that did not all fit took 24% longer than the workspace's 6 ranges.
    if (threadBlockClustersSupported())
        for (int64_t s = std::min({int64_t(kMaxClusterSplits), byKeys, byGrid}); s >= 2; --s)
            if (ctas <= residentClustersFor(shape.headDim, int(s))) return {int(s), true};
    // Workspace merge: as many ranges as keep every CTA in one wave (kResidentCtasPerSm per SM),
    // within the workspace's row capacity.
    const int64_t byWave = int64_t(kResidentCtasPerSm) * sms / ctas;
    const int64_t byWorkspace = int64_t(split.workspaceBytes / (size_t(split.numTokens) * size_t(shape.numHeads) *
                                                                size_t(shape.headDim + 2) * sizeof(float)));
    const int64_t splits = std::min({byWave, byKeys, byWorkspace, byGrid, int64_t(kMaxPrefillSplits)});
    return {splits >= 2 ? int(splits) : 1, false};
}

template <typename T, int HD>
void launchPrefill(const void* q, void* out, const void* kCache, const void* vCache, const AttentionBatch& batch,
                   int maxQueryLen, const AttentionShape& shape, int splits, bool clusterMerge,
                   const PrefillSplit& split, cudaStream_t stream)
{
    const int G = shape.numHeads / shape.numKvHeads;
    const int64_t tiles = (int64_t(maxQueryLen) * G + kRowsPerCta - 1) / kRowsPerCta;
    const dim3 grid(unsigned(tiles), unsigned(shape.numKvHeads), unsigned(batch.numSeqs * splits));
    const int qStride = shape.qTokenStride > 0 ? shape.qTokenStride : shape.numHeads * HD;
    const float scaleLog2 = kLog2e / sqrtf(float(HD));
    const int sharedBytes = optInSharedMemory<T, HD>();
    const bool splitKeys = splits > 1;
    auto kernel = clusterMerge ? paged_attention_prefill_kernel<T, HD, true, true>
                  : splitKeys  ? paged_attention_prefill_kernel<T, HD, true, false>
                               : paged_attention_prefill_kernel<T, HD, false, false>;
    auto* partials = splitKeys && !clusterMerge ? static_cast<float*>(split.workspace) : nullptr;
    // Only a split launch is a programmatic dependent: its grid is one wave by construction
    // (paged_attention_prefill_splits), so CTAs that start early and wait cost nothing, and a
    // prefix-cache hit's CTAs stream the cached history during RoPE (83 new tokens over 1,717:
    // -2% a step). A long prompt's grid runs in several waves, ordered longest tile first; launched
    // early, its CTAs settle on the SMs in the order RoPE's CTAs leave them, and a 2,048-token step
    // took 5% longer (docs/benchmarks.md).
    const bool dependent = pdlPrefillKernels() && splitKeys;
    // Clusters run along grid.z: the splits of one (tile, kv head, sequence) are consecutive there.
    const dim3 cluster(1, 1, clusterMerge ? unsigned(splits) : 1u);
    launchDependentIf(dependent, cluster, kernel, grid, dim3(kThreads), size_t(sharedBytes), stream,
                      static_cast<const T*>(q), static_cast<T*>(out), static_cast<const T*>(kCache),
                      static_cast<const T*>(vCache), batch.queryStart, batch.contextLens, batch.blockTables,
                      batch.maxBlocksPerSeq, shape.numHeads, shape.numKvHeads, blockShiftOf(shape.blockSize), qStride,
                      scaleLog2, partials, splits, dependent);
    if (splitKeys && !clusterMerge) {
        const int rows = split.numTokens * shape.numHeads, rowsPerCta = kThreads / 32;
        launchDependentIf(dependent, dim3(1, 1, 1), merge_prefill_splits_kernel<T, HD>,
                          dim3(unsigned((rows + rowsPerCta - 1) / rowsPerCta)), dim3(kThreads), 0, stream,
                          static_cast<const float*>(partials), static_cast<T*>(out), rows, splits);
    }
}

}  // namespace

size_t paged_attention_prefill_workspace_bytes(int numHeads, int headDim)
{
    if (numHeads <= 0 || headDim <= 0) return 0;
    return size_t(kPrefillSplitRowCapacity) * size_t(numHeads) * size_t(headDim + 2) * sizeof(float);
}

bool paged_attention_prefill_merges_in_cluster(int numSeqs, int maxQueryLen, const AttentionShape& shape,
                                               const PrefillSplit& split)
{
    return planPrefillSplit(numSeqs, maxQueryLen, shape, split).clusterMerge;
}

int paged_attention_prefill_splits(int numSeqs, int maxQueryLen, const AttentionShape& shape, const PrefillSplit& split)
{
    return planPrefillSplit(numSeqs, maxQueryLen, shape, split).splits;
}

void launch_paged_attention_prefill(ElementType type, const void* q, void* out, const void* kCache, const void* vCache,
                                    const AttentionBatch& batch, int maxQueryLen, const AttentionShape& shape,
                                    cudaStream_t stream, const PrefillSplit& split)
{
    if (shape.numHeads <= 0 || shape.numKvHeads <= 0 || shape.numHeads % shape.numKvHeads != 0 ||
        blockShiftOf(shape.blockSize) < 0 || shape.numKvHeads > 65535 || batch.numSeqs > 65535 ||
        batch.maxBlocksPerSeq <= 0 ||
        (shape.qTokenStride != 0 && (shape.qTokenStride < shape.numHeads * shape.headDim || shape.qTokenStride % 8)))
        throw CudaError("launch_paged_attention_prefill: bad shape (NH " + std::to_string(shape.numHeads) + ", KVH " +
                        std::to_string(shape.numKvHeads) + ", BS " + std::to_string(shape.blockSize) + ", seqs " +
                        std::to_string(batch.numSeqs) + ", q stride " + std::to_string(shape.qTokenStride) + ")");
    if (batch.numSeqs <= 0 || maxQueryLen <= 0) return;
    const SplitPlan plan = planPrefillSplit(batch.numSeqs, maxQueryLen, shape, split);
    BROOK_DISPATCH_ELEMENT_TYPE(type, T, {
        switch (shape.headDim) {
        case 32:
            launchPrefill<T, 32>(q, out, kCache, vCache, batch, maxQueryLen, shape, plan.splits, plan.clusterMerge,
                                 split, stream);
            break;
        case 64:
            launchPrefill<T, 64>(q, out, kCache, vCache, batch, maxQueryLen, shape, plan.splits, plan.clusterMerge,
                                 split, stream);
            break;
        case 128:
            launchPrefill<T, 128>(q, out, kCache, vCache, batch, maxQueryLen, shape, plan.splits, plan.clusterMerge,
                                  split, stream);
            break;
        default:
            throw CudaError("launch_paged_attention_prefill: head dim " + std::to_string(shape.headDim) +
                            " not built (32, 64, 128)");
        }
    });
}

}  // namespace brook::cuda
