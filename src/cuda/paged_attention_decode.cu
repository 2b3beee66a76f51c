// Paged attention for decode (one query per sequence): GQA-aware flash-decoding.
// Reference: brook::cpu::pagedAttention; test: tests/cuda/test_paged_attention.cpp.
//
// Shapes: q [numSeqs, NH, HD] (row s = sequence s, rows qTokenStride apart), out [numSeqs, NH, HD],
// k/v cache [B, BS, KVH, HD]. Workspace (fp32): partial O [numSeqs, NH, splits, HD], then
// log2-sum-exp [numSeqs, NH, splits]; its last bytes hold one arrival counter per
// (seq, head group), indexed back from the end so every batch size finds them at the same place.
// Grid (KVH * ceil(G / 8), numSeqs, splits): a CTA takes up to 8 query heads of one kv head (all
// 8 of an ERNIE group) so every K/V tile is read once for the group. Each CTA issues its first
// K/V tile before the programmatic-dependent-launch wait (all of it but the new token's row, the
// one position the kernel before is writing), so at batch 1 the cache read overlaps the qkv GEMV.
//
// The MMAs run transposed, keys on M and heads on N (m16n8k16): S^T = K Q^T takes a 16-key K
// slice as the A operand and Q as B, and O^T += V^T P^T takes V through ldmatrix.trans as A and
// P^T as B (movmatrix turns S^T's accumulator into that B fragment). Nothing is padded for a
// group of 8, so a warp's O^T is 32 registers where the 16-query-row layout needed 64 (half of
// them padding rows), and occupancy doubles. Lane (g, t) holds keys g, g + 8 of each 16-key step
// and heads 2t, 2t + 1; O^T m-tile mt holds dims mt*16 + g and + 8.
//
// The context of length c is cut into partitions (decodePartition below) of whole 64-key tiles;
// CTA `split` takes keys [split * P, min(c, (split + 1) * P)). Its 4 warps each take 16 keys of
// every 64-key tile; a merge in shared memory combines the warps:
//   M = max_w m_w,  L = sum_w l_w 2^(m_w - M),  O = sum_w O_w 2^(m_w - M) / L.
// Then, by how many partitions the sequence uses:
//   one: O goes straight to out;
//   up to the cluster size (sm_90 launches the splits in thread-block clusters of up to 8): every
//     CTA of the sequence's first cluster leaves (O, M + log2 L) in its shared memory and, after a
//     cluster barrier, each merges a share of the rows by reading its peers' shared memory: no
//     global round trips, which is most of a short context's time at batch 1;
//   more: each CTA stores O and M + log2 L to the workspace, and the last CTA of the group to
//     arrive (atomic counter) combines them and resets the counter to zero, so no second kernel
//     and no per-step memset.
// `splits` depends only on numSeqs and maxContextLen, so a captured CUDA graph stays valid while
// context lengths change.
#include "cuda/paged_attention.h"
#include "cuda/paged_attention_common.cuh"

#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/pdl.cuh"

#include <algorithm>
#include <mutex>
#include <string>

namespace brook::cuda {
namespace {

using namespace attn;

// CTAs per SM the decode kernel is compiled for (registers: 5 -> <= 102, 6 -> <= 85 per thread).
// A build-time knob for attention_bench A/B runs (-DBROOK_DECODE_CTAS_PER_SM=6).
#ifndef BROOK_DECODE_CTAS_PER_SM
#define BROOK_DECODE_CTAS_PER_SM 5
#endif

constexpr int kHeadsPerCta = 8;  // the MMA's N
constexpr int kWarps = kThreads / 32;
constexpr int kMaxCluster = 8;  // portable cluster size
// A sequence whose context fits clusterSize partitions of at most this many keys merges inside
// its cluster even when the fill rule would cut it finer (a few more tiles per CTA cost less than
// the workspace round trips).
constexpr int kClusterMaxKeys = 256;

struct DecodePartition {
    int size;  // keys per partition, a multiple of kTileKeys
    int used;  // partitions (CTAs) that hold keys
};

// Short contexts (up to clusterSize partitions of kClusterMaxKeys) use the finest partition that
// fits the cluster, merged in shared memory; longer ones the workspace rule (decodePartitionSize).
__device__ inline DecodePartition decodePartition(int ctx, int splits, int fill, int clusterSize)
{
    int size = 0;
    if (clusterSize > 1) {
        const int perCta = (ctx + clusterSize - 1) / clusterSize;
        size = (perCta + kTileKeys - 1) / kTileKeys * kTileKeys;
    }
    if (size == 0 || size > kClusterMaxKeys) size = decodePartitionSize(ctx, splits, fill);
    return {size, (ctx + size - 1) / size};
}

// One warp's running softmax state, transposed layout (see the top).
template <int HD>
struct DecodeWarpState {
    float o[HD / 16][4];  // [mt]: (dim g, head 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)
    float m[2];           // running max of scaled scores (log2 domain), heads 2t, 2t+1; -inf until a key
    float l[2];           // this lane's partial sums over its keys, heads 2t, 2t+1
    __device__ void init()
    {
#pragma unroll
        for (int n = 0; n < HD / 16; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
        m[0] = m[1] = -INFINITY;
        l[0] = l[1] = 0.0f;
    }
};

// S^T for 16 keys (rows of the K tile at `ks`), masked past keyEnd, then the online-softmax
// update; leaves P^T = exp2(s - m) in s.
template <typename T, int HD>
__device__ inline void scoreKeys(DecodeWarpState<HD>& st, float (&s)[4], const uint32_t (&qb)[HD / 16][2], const T* ks,
                                 int keyBase, int keyEnd, float scaleLog2)
{
    constexpr int S = smemStride<HD>();
    const int lane = threadIdx.x & 31, g = lane >> 2, mi = lane >> 3, r = lane & 7;
    s[0] = s[1] = s[2] = s[3] = 0.0f;
    const T* row = ks + ((mi & 1) * 8 + r) * S + (mi >> 1) * 8;
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
        uint32_t a[4];
        ldmatrixX4(a, row + kk * 16);
        mma16816<T>(s, a, qb[kk][0], qb[kk][1]);
    }
    const bool valid0 = keyBase + g < keyEnd, valid1 = keyBase + g + 8 < keyEnd;
    s[0] = valid0 ? s[0] * scaleLog2 : -INFINITY;
    s[1] = valid0 ? s[1] * scaleLog2 : -INFINITY;
    s[2] = valid1 ? s[2] * scaleLog2 : -INFINITY;
    s[3] = valid1 ? s[3] * scaleLog2 : -INFINITY;
    float mx0 = fmaxf(s[0], s[2]), mx1 = fmaxf(s[1], s[3]);
#pragma unroll
    for (int o = 4; o < 32; o <<= 1) {
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, o));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, o));
    }
    const float m0 = fmaxf(st.m[0], mx0), m1 = fmaxf(st.m[1], mx1);
    // A head with every key so far masked keeps m = -inf; subtracting 0 then keeps exp2 at 0, not NaN.
    const float base0 = m0 == -INFINITY ? 0.0f : m0, base1 = m1 == -INFINITY ? 0.0f : m1;
    const float corr0 = exp2f(st.m[0] - base0), corr1 = exp2f(st.m[1] - base1);
    st.m[0] = m0;
    st.m[1] = m1;
    s[0] = exp2f(s[0] - base0);
    s[2] = exp2f(s[2] - base0);
    s[1] = exp2f(s[1] - base1);
    s[3] = exp2f(s[3] - base1);
    st.l[0] = st.l[0] * corr0 + s[0] + s[2];
    st.l[1] = st.l[1] * corr1 + s[1] + s[3];
#pragma unroll
    for (int n = 0; n < HD / 16; ++n) {
        st.o[n][0] *= corr0;
        st.o[n][2] *= corr0;
        st.o[n][1] *= corr1;
        st.o[n][3] *= corr1;
    }
}

// O^T += V^T P^T over the same 16 keys (rows of the V tile at `vs`).
template <typename T, int HD>
__device__ inline void accumulateKeys(DecodeWarpState<HD>& st, const float (&s)[4], const T* vs)
{
    constexpr int S = smemStride<HD>();
    const int lane = threadIdx.x & 31, mi = lane >> 3, r = lane & 7;
    // P^T rows (keys g, g + 8) x heads (2t, 2t + 1), transposed into the B fragment
    // (keys 2t, 2t + 1 and 2t + 8, 2t + 9 of head g).
    const uint32_t b0 = movmatrixTrans(pack2<T>(s[0], s[1]));
    const uint32_t b1 = movmatrixTrans(pack2<T>(s[2], s[3]));
    // ldmatrix.trans matrices: 0 = keys 0-7 / dims d..d+7, 1 = keys 0-7 / d+8.., 2, 3 = keys 8-15.
    const T* row = vs + ((mi >> 1) * 8 + r) * S + (mi & 1) * 8;
#pragma unroll
    for (int mt = 0; mt < HD / 16; ++mt) {
        uint32_t a[4];
        ldmatrixX4Trans(a, row + mt * 16);
        mma16816<T>(st.o[mt], a, b0, b1);
    }
}

template <typename T, int HD>
__global__ void __launch_bounds__(kThreads, BROOK_DECODE_CTAS_PER_SM)
    paged_attention_decode_kernel(const T* __restrict__ q, T* __restrict__ out, const T* __restrict__ kCache,
                                  const T* __restrict__ vCache, const int32_t* __restrict__ contextLens,
                                  const int32_t* __restrict__ blockTables, int maxBlocksPerSeq, int numHeads,
                                  int numKvHeads, int blockShift, int qTokenStride, float scaleLog2,
                                  float* __restrict__ partialO, float* __restrict__ partialLse,
                                  unsigned* __restrict__ countersEnd, int fillSplits, int clusterSize, int earlyWait)
{
    constexpr int S = smemStride<HD>();
    constexpr int kMergeStride = HD + 4;  // floats; the lanes' scalar stores hit 32 distinct banks
    constexpr int kMergeFloats = kWarps * kHeadsPerCta * kMergeStride;
    static_assert((kMergeFloats + kHeadsPerCta * HD) * sizeof(float) <= 2 * kTileKeys * S * sizeof(T),
                  "the merge buffers reuse the K/V tiles");
    __shared__ __align__(16) unsigned char smem[2 * kTileKeys * S * sizeof(T)];
    __shared__ float mergeM[kWarps][kHeadsPerCta];
    __shared__ float mergeL[kWarps][kHeadsPerCta];
    __shared__ float rowMax[kHeadsPerCta], rowSum[kHeadsPerCta];
    __shared__ float ctaLse[kHeadsPerCta];  // cluster merge: this CTA's M + log2 L per head (-inf: no keys)
    __shared__ int isLast;
    T* ks = reinterpret_cast<T*>(smem);
    T* vs = ks + kTileKeys * S;
    pdlAllowNext();
    if (earlyWait) pdlWaitForPrevious();
    // Before the PDL wait only what the host uploaded (context lengths, block tables) and cache
    // positions written by earlier steps may be read: everything but this step's new token
    // (position ctx - 1), which the qkv kernel before us is writing.

    const int seq = blockIdx.y, split = blockIdx.z, splits = gridDim.z;
    const int G = numHeads / numKvHeads;
    const int chunks = (G + kHeadsPerCta - 1) / kHeadsPerCta;
    const int kvh = blockIdx.x / chunks, chunk = blockIdx.x % chunks;
    const int headBegin = kvh * G + chunk * kHeadsPerCta;
    const int nRows = min(kHeadsPerCta, G - chunk * kHeadsPerCta);
    const int ctx = contextLens[seq];
    T* outRows = out + (int64_t(seq) * numHeads + headBegin) * HD;

    if (ctx <= 0) {  // padded slot of a graph bucket: defined output, no cache reads
        if (split == 0) {
            pdlWaitForPrevious();  // the previous kernel may still read this step's out buffer
            for (int i = threadIdx.x; i < nRows * HD; i += kThreads) outRows[i] = fromFloat<T>(0.0f);
        }
        return;
    }
    const DecodePartition part = decodePartition(ctx, splits, fillSplits, clusterSize);
    const int used = part.used;
    // Uniform over the sequence's CTAs, hence over each cluster (clusters run along the splits).
    const bool clusterMerge = used > 1 && used <= clusterSize;
    if (split >= (clusterMerge ? clusterSize : used)) return;     // no keys, no merge duty
    float* ctaO = reinterpret_cast<float*>(smem) + kMergeFloats;  // [head][HD], cluster merge only
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int newest = ctx - 1;

    int k0 = 0, k1 = 0, numTiles = 0;
    const int32_t* blockTable = blockTables + int64_t(seq) * maxBlocksPerSeq;
    if (split < used) {
        k0 = split * part.size;
        k1 = min(ctx, k0 + part.size);
        numTiles = (k1 - k0 + kTileKeys - 1) / kTileKeys;
        loadKvTile<T, HD>(ks, kCache, blockTable, k0, k1, blockShift, numKvHeads, kvh, newest);
        copyCommit();
        loadKvTile<T, HD>(vs, vCache, blockTable, k0, k1, blockShift, numKvHeads, kvh, newest);
        copyCommit();
    }
    pdlWaitForPrevious();  // q and the new token's K/V come from the kernel before

    if (split < used) {
        if (newest < k0 + kTileKeys) {  // the new token sits in the first tile: fetch it now
            loadKvRow<T, HD>(ks, kCache, blockTable, k0, newest, blockShift, numKvHeads, kvh);
            loadKvRow<T, HD>(vs, vCache, blockTable, k0, newest, blockShift, numKvHeads, kvh);
        }
        copyCommit();
        // Q as the B operand: lane (g, t) holds head g's dims kk*16 + 2t, +1 and + 8, + 9; heads past
        // the group are zero.
        uint32_t qb[HD / 16][2];
        {
            const uint32_t* qRow =
                g < nRows
                    ? reinterpret_cast<const uint32_t*>(q + int64_t(seq) * qTokenStride + int64_t(headBegin + g) * HD)
                    : nullptr;
#pragma unroll
            for (int kk = 0; kk < HD / 16; ++kk) {
                qb[kk][0] = qRow ? __ldcg(qRow + kk * 8 + t) : 0u;
                qb[kk][1] = qRow ? __ldcg(qRow + kk * 8 + t + 4) : 0u;
            }
        }

        DecodeWarpState<HD> st;
        st.init();
        float s[4];
        const int slice = warp * 16;  // this warp's keys within each tile
        for (int i = 0; i < numTiles; ++i) {
            const int kb = k0 + i * kTileKeys;
            const bool active = kb + slice < k1;
            if (i == 0) copyWait<0>();  // the prefetched tiles and the new token's row
            else copyWait<1>();
            __syncthreads();
            if (active) scoreKeys<T, HD>(st, s, qb, ks + slice * S, kb + slice, k1, scaleLog2);
            __syncthreads();
            if (i + 1 < numTiles)
                loadKvTile<T, HD>(ks, kCache, blockTable, kb + kTileKeys, k1, blockShift, numKvHeads, kvh);
            copyCommit();
            copyWait<1>();
            __syncthreads();
            if (active) accumulateKeys<T, HD>(st, s, vs + slice * S);
            __syncthreads();
            if (i + 1 < numTiles)
                loadKvTile<T, HD>(vs, vCache, blockTable, kb + kTileKeys, k1, blockShift, numKvHeads, kvh);
            copyCommit();
        }
        copyWait<0>();
        __syncthreads();  // the tiles' memory becomes the merge buffer

        float l0 = st.l[0], l1 = st.l[1];
#pragma unroll
        for (int o = 4; o < 32; o <<= 1) {
            l0 += __shfl_xor_sync(0xffffffffu, l0, o);
            l1 += __shfl_xor_sync(0xffffffffu, l1, o);
        }
        float* mergeO = reinterpret_cast<float*>(smem);  // [warp][head][kMergeStride]
        if (g == 0) {
            mergeM[warp][2 * t] = st.m[0];
            mergeM[warp][2 * t + 1] = st.m[1];
            mergeL[warp][2 * t] = l0;
            mergeL[warp][2 * t + 1] = l1;
        }
        float* head0 = mergeO + (warp * kHeadsPerCta + 2 * t) * kMergeStride + g;
        float* head1 = head0 + kMergeStride;
#pragma unroll
        for (int mt = 0; mt < HD / 16; ++mt) {
            head0[mt * 16] = st.o[mt][0];
            head1[mt * 16] = st.o[mt][1];
            head0[mt * 16 + 8] = st.o[mt][2];
            head1[mt * 16 + 8] = st.o[mt][3];
        }
        __syncthreads();

        // Warp 0 always saw key k0 <= pos, so M is finite; warps that saw nothing have m = -inf, weight 0.
        const int64_t rowSlot = (int64_t(seq) * numHeads + headBegin) * splits;  // + r * splits + split
        for (int idx = threadIdx.x; idx < nRows * (HD / 2); idx += kThreads) {
            const int r = idx / (HD / 2), d = (idx % (HD / 2)) * 2;
            float M = -INFINITY;
#pragma unroll
            for (int w = 0; w < kWarps; ++w) M = fmaxf(M, mergeM[w][r]);
            float L = 0.0f, o0 = 0.0f, o1 = 0.0f;
#pragma unroll
            for (int w = 0; w < kWarps; ++w) {
                const float weight = exp2f(mergeM[w][r] - M);
                const float* row = mergeO + (w * kHeadsPerCta + r) * kMergeStride + d;
                L += mergeL[w][r] * weight;
                o0 += row[0] * weight;
                o1 += row[1] * weight;
            }
            const float inv = 1.0f / L;
            if (used == 1) {
                *reinterpret_cast<uint32_t*>(outRows + r * HD + d) = pack2<T>(o0 * inv, o1 * inv);
            } else if (clusterMerge) {
                *reinterpret_cast<float2*>(ctaO + r * HD + d) = make_float2(o0 * inv, o1 * inv);
                if (d == 0) ctaLse[r] = M + log2f(L);
            } else {
                const int64_t slot = rowSlot + int64_t(r) * splits + split;
                *reinterpret_cast<float2*>(partialO + slot * HD + d) = make_float2(o0 * inv, o1 * inv);
                if (d == 0) partialLse[slot] = M + log2f(L);
            }
        }
        if (used == 1) return;
    } else if (threadIdx.x < kHeadsPerCta) {
        ctaLse[threadIdx.x] = -INFINITY;  // a cluster peer past the context: weight 0 in the merge
    }

    if (clusterMerge) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        namespace cg = cooperative_groups;
        cg::cluster_group cluster = cg::this_cluster();
        cluster.sync();  // every peer's (O, lse) is in its shared memory
        const int rank = int(cluster.block_rank());
        for (int idx = rank * kThreads + threadIdx.x; idx < nRows * (HD / 2); idx += clusterSize * kThreads) {
            const int r = idx / (HD / 2), d = (idx % (HD / 2)) * 2;
            const float2 merged = mergeClusterPeers<kMaxCluster>(cluster, ctaLse + r, ctaO + r * HD + d, clusterSize);
            *reinterpret_cast<uint32_t*>(outRows + r * HD + d) = pack2<T>(merged.x, merged.y);
        }
        cluster.sync();  // no CTA leaves while a peer may still read its shared memory
#endif
        return;
    }

    // Publish this split; the last of the group's `used` CTAs to arrive combines them.
    const int64_t rowSlot = (int64_t(seq) * numHeads + headBegin) * splits;
    __threadfence();
    __syncthreads();
    unsigned* counter = countersEnd - 1 - (int64_t(seq) * gridDim.x + blockIdx.x);
    if (threadIdx.x == 0) isLast = atomicAdd(counter, 1u) == unsigned(used - 1);
    __syncthreads();
    if (!isLast) return;
    __threadfence();
    // Per row: M = max_i lse_i, L = sum_i 2^(lse_i - M) (one warp per row, lanes over splits).
    for (int r = warp; r < nRows; r += kWarps) {
        const float* lse = partialLse + rowSlot + int64_t(r) * splits;
        float m = -INFINITY;
        for (int i = lane; i < used; i += 32) m = fmaxf(m, __ldcg(lse + i));
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        float sum = 0.0f;
        for (int i = lane; i < used; i += 32) sum += exp2f(__ldcg(lse + i) - m);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (lane == 0) {
            rowMax[r] = m;
            rowSum[r] = sum;
        }
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < nRows * (HD / 2); idx += kThreads) {
        const int r = idx / (HD / 2), d = (idx % (HD / 2)) * 2;
        const int64_t first = rowSlot + int64_t(r) * splits;
        const float m = rowMax[r];
        float o0 = 0.0f, o1 = 0.0f;
#pragma unroll 8
        for (int i = 0; i < used; ++i) {  // unrolled: 8 partials' loads in flight at once
            const float w = exp2f(__ldcg(partialLse + first + i) - m);
            const float2 o = __ldcg(reinterpret_cast<const float2*>(partialO + (first + i) * HD + d));
            o0 += w * o.x;
            o1 += w * o.y;
        }
        const float inv = 1.0f / rowSum[r];
        *reinterpret_cast<uint32_t*>(outRows + r * HD + d) = pack2<T>(o0 * inv, o1 * inv);
    }
    if (threadIdx.x == 0) *counter = 0u;  // every CTA of the group has arrived: ready for the next launch
}

int headGroups(int numHeads, int numKvHeads)
{
    return numKvHeads * ((numHeads / numKvHeads + kHeadsPerCta - 1) / kHeadsPerCta);
}

// Splits per sequence that give about two CTAs per SM when every sequence splits alike.
int fillSplits(int numSeqs, int numHeads, int numKvHeads, int sms)
{
    const int64_t ctasPerSplit = std::max<int64_t>(1, int64_t(numSeqs) * headGroups(numHeads, numKvHeads));
    return int(std::max<int64_t>(1, (2 * int64_t(sms) + ctasPerSplit - 1) / ctasPerSplit));
}

// CTAs per cluster: as many as short sequences spread over (fill), up to 8, where clusters exist;
// 1 (no clusters) when sequences do not split to fill the GPU, i.e. at large batch.
int clusterSizeFor(int splits, int fill)
{
    if (!threadBlockClustersSupported() || fill < 2) return 1;
    return std::max(1, std::min({splits, fill, kMaxCluster}));
}

// Grid splits: what a sequence of maxContextLen may use (decodePartitionSize), at least a tile
// each, rounded up to a whole number of clusters.
int decodeSplits(int numSeqs, int numHeads, int numKvHeads, int maxContextLen, int sms)
{
    if (numSeqs <= 0 || maxContextLen <= 0) return 1;
    const int64_t fill = fillSplits(numSeqs, numHeads, numKvHeads, sms);
    const int64_t longest =
        std::min<int64_t>(kMaxLongSplits, (int64_t(maxContextLen) + kMaxPartition - 1) / kMaxPartition);
    const int64_t useful = (int64_t(maxContextLen) + kTileKeys - 1) / kTileKeys;
    const int splits = int(std::max<int64_t>(1, std::min(std::max(fill, longest), useful)));
    const int cluster = clusterSizeFor(splits, int(fill));
    return (splits + cluster - 1) / cluster * cluster;
}

// Lets every instantiation use the SM's whole shared memory, so occupancy is bounded by
// registers (about 5 CTAs per SM), not by the default carveout. Once per process, before any
// graph capture (the workspace is sized at backend setup).
void prepareDecodeKernels()
{
    static std::once_flag once;
    std::call_once(once, [] {
        auto prefer = [](auto kernel) {
            BROOK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                                  int(cudaSharedmemCarveoutMaxShared)));
        };
        prefer(paged_attention_decode_kernel<__nv_bfloat16, 32>);
        prefer(paged_attention_decode_kernel<__nv_bfloat16, 64>);
        prefer(paged_attention_decode_kernel<__nv_bfloat16, 128>);
        prefer(paged_attention_decode_kernel<__half, 32>);
        prefer(paged_attention_decode_kernel<__half, 64>);
        prefer(paged_attention_decode_kernel<__half, 128>);
    });
}

size_t partialBytes(int numSeqs, int splits, int numHeads, int headDim)
{
    return size_t(numSeqs) * numHeads * splits * (headDim + 1) * sizeof(float);
}

template <typename T, int HD>
void launchDecode(const void* q, void* out, const void* kCache, const void* vCache, const AttentionBatch& batch,
                  int splits, int fill, const AttentionShape& shape, float* partialO, float* partialLse,
                  unsigned* countersEnd, cudaStream_t stream)
{
    // Splits slowest: every sequence's first partition is dispatched before any CTA that may only
    // exit (a short context under a long captured maximum), and clusters run along the splits.
    const dim3 grid(unsigned(headGroups(shape.numHeads, shape.numKvHeads)), unsigned(batch.numSeqs), unsigned(splits));
    const int qStride = shape.qTokenStride > 0 ? shape.qTokenStride : shape.numHeads * HD;
    const float scaleLog2 = kLog2e / sqrtf(float(HD));
    const int cluster = clusterSizeFor(splits, fill);
    launchDependentClustered(dim3(1, 1, unsigned(cluster)), paged_attention_decode_kernel<T, HD>, grid, dim3(kThreads),
                             0, stream, static_cast<const T*>(q), static_cast<T*>(out), static_cast<const T*>(kCache),
                             static_cast<const T*>(vCache), batch.contextLens, batch.blockTables, batch.maxBlocksPerSeq,
                             shape.numHeads, shape.numKvHeads, blockShiftOf(shape.blockSize), qStride, scaleLog2,
                             partialO, partialLse, countersEnd, fill, cluster, pdlEarlyWait() & 1);
}

}  // namespace

int paged_attention_decode_splits(int numSeqs, int numHeads, int numKvHeads, int maxContextLen)
{
    if (numHeads <= 0 || numKvHeads <= 0) return 1;
    return decodeSplits(numSeqs, numHeads, numKvHeads, maxContextLen, multiprocessorCount());
}

size_t paged_attention_decode_workspace_bytes(int maxSeqs, int numHeads, int numKvHeads, int headDim, int maxContextLen)
{
    if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0 || maxSeqs <= 0) return 0;
    prepareDecodeKernels();
    const int sms = multiprocessorCount();
    size_t partials = 0;
    for (int n = 1; n <= maxSeqs; ++n) {
        const int splits = decodeSplits(n, numHeads, numKvHeads, maxContextLen, sms);
        if (splits > 1) partials = std::max(partials, partialBytes(n, splits, numHeads, headDim));
    }
    // Counters sit past the largest partials of any batch size, so batch sizes never clobber them.
    return partials ? partials + size_t(maxSeqs) * headGroups(numHeads, numKvHeads) * sizeof(unsigned) : 0;
}

void launch_paged_attention_decode(ElementType type, const void* q, void* out, const void* kCache, const void* vCache,
                                   const AttentionBatch& batch, int maxContextLen, const AttentionShape& shape,
                                   void* workspace, size_t workspaceBytes, cudaStream_t stream)
{
    if (shape.numHeads <= 0 || shape.numKvHeads <= 0 || shape.numHeads % shape.numKvHeads != 0 ||
        blockShiftOf(shape.blockSize) < 0 || batch.numSeqs > 65535 || batch.maxBlocksPerSeq <= 0 ||
        maxContextLen <= 0 || headGroups(shape.numHeads, shape.numKvHeads) > 65535 ||
        (shape.qTokenStride != 0 && (shape.qTokenStride < shape.numHeads * shape.headDim || shape.qTokenStride % 8)))
        throw CudaError("launch_paged_attention_decode: bad shape (NH " + std::to_string(shape.numHeads) + ", KVH " +
                        std::to_string(shape.numKvHeads) + ", BS " + std::to_string(shape.blockSize) + ", seqs " +
                        std::to_string(batch.numSeqs) + ", max context " + std::to_string(maxContextLen) + ")");
    if (batch.numSeqs <= 0) return;
    prepareDecodeKernels();
    const int sms = multiprocessorCount();
    const int splits = decodeSplits(batch.numSeqs, shape.numHeads, shape.numKvHeads, maxContextLen, sms);
    const int fill = fillSplits(batch.numSeqs, shape.numHeads, shape.numKvHeads, sms);
    const size_t counters = size_t(batch.numSeqs) * headGroups(shape.numHeads, shape.numKvHeads) * sizeof(unsigned);
    const size_t needed =
        splits > 1 ? partialBytes(batch.numSeqs, splits, shape.numHeads, shape.headDim) + counters : 0;
    if (workspaceBytes < needed || (needed > 0 && workspace == nullptr))
        throw CudaError("launch_paged_attention_decode: workspace of " + std::to_string(workspaceBytes) + " bytes, " +
                        std::to_string(needed) + " needed for " + std::to_string(batch.numSeqs) + " seqs x " +
                        std::to_string(splits) + " splits (size it with paged_attention_decode_workspace_bytes)");
    float* partialO = static_cast<float*>(workspace);
    float* partialLse = nullptr;
    unsigned* countersEnd = nullptr;
    if (needed > 0) {
        partialLse = partialO + size_t(batch.numSeqs) * shape.numHeads * splits * shape.headDim;
        countersEnd = reinterpret_cast<unsigned*>(static_cast<char*>(workspace) + (workspaceBytes & ~size_t(3)));
    }
    BROOK_DISPATCH_ELEMENT_TYPE(type, T, {
        switch (shape.headDim) {
        case 32:
            launchDecode<T, 32>(q, out, kCache, vCache, batch, splits, fill, shape, partialO, partialLse, countersEnd,
                                stream);
            break;
        case 64:
            launchDecode<T, 64>(q, out, kCache, vCache, batch, splits, fill, shape, partialO, partialLse, countersEnd,
                                stream);
            break;
        case 128:
            launchDecode<T, 128>(q, out, kCache, vCache, batch, splits, fill, shape, partialO, partialLse, countersEnd,
                                 stream);
            break;
        default:
            throw CudaError("launch_paged_attention_decode: head dim " + std::to_string(shape.headDim) +
                            " not built (32, 64, 128)");
        }
    });
}

}  // namespace brook::cuda
