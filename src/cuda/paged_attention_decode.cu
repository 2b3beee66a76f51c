// Paged attention for decode (one query per sequence): GQA-aware flash-decoding.
// Reference: brook::cpu::pagedAttention; test: tests/cuda/test_paged_attention.cpp.
//
// Shapes: q [numSeqs, NH, HD] (row s = sequence s, rows qTokenStride apart), out [numSeqs, NH, HD],
// k/v cache [B, BS, KVH, HD]. Workspace (fp32): partial O [numSeqs, NH, splits, HD], then
// log2-sum-exp [numSeqs, NH, splits]; its last bytes hold one arrival counter per
// (seq, head group), indexed back from the end so every batch size finds them at the same place.
// Grid (splits, KVH * ceil(G / 16), numSeqs): a CTA takes up to 16 query heads of one kv head
// (all 8 of an ERNIE group, as the 16 MMA rows) so every K/V tile is read once for the group.
// The context of length c is cut into partitions of P = roundup64(ceil(c / s)) keys, where s <= splits
// is what the sequence needs (decodePartitionSize); CTA `split` takes keys
// [split * P, min(c, (split + 1) * P)) and exits if that is empty. Its 4 warps
// each take 16 keys of every 64-key tile; a merge in shared memory combines the warps:
//   M = max_w m_w,  L = sum_w l_w 2^(m_w - M),  O = sum_w O_w 2^(m_w - M) / L.
// One partition: O goes straight to out. Several: each CTA stores O and M + log2 L, and the
// last CTA of the group to arrive (atomic counter) combines them the same way and resets the
// counter to zero, so no second kernel and no per-step memset. `splits` depends only on numSeqs
// and maxContextLen, so a captured CUDA graph stays valid while context lengths change.
#include "cuda/paged_attention.h"
#include "cuda/paged_attention_common.cuh"

#include "cuda/cuda_check.h"
#include "cuda/pdl.cuh"

#include <algorithm>
#include <string>

namespace brook::cuda {
namespace {

using namespace attn;

constexpr int kHeadsPerCta = 16;
constexpr int kWarps = kThreads / 32;

template <typename T, int HD>
__global__ void __launch_bounds__(kThreads)
paged_attention_decode_kernel(const T* __restrict__ q, T* __restrict__ out, const T* __restrict__ kCache,
                              const T* __restrict__ vCache, const int32_t* __restrict__ contextLens,
                              const int32_t* __restrict__ blockTables, int maxBlocksPerSeq, int numHeads,
                              int numKvHeads, int blockSize, int qTokenStride, float scaleLog2,
                              float* __restrict__ partialO, float* __restrict__ partialLse,
                              unsigned* __restrict__ countersEnd, int fillSplits)
{
    constexpr int S = smemStride<HD>();
    constexpr int kMergeStride = HD + 8; // floats; keeps the warps' float2 stores conflict-free
    static_assert(kWarps * 16 * kMergeStride * sizeof(float) <= 2 * kTileKeys * S * sizeof(T),
                  "merge buffer reuses the K/V tiles");
    __shared__ __align__(16) unsigned char smem[2 * kTileKeys * S * sizeof(T)];
    __shared__ float mergeM[kWarps][16];
    __shared__ float mergeL[kWarps][16];
    __shared__ float rowMax[16], rowSum[16];
    __shared__ int isLast;
    T* ks = reinterpret_cast<T*>(smem);
    T* vs = ks + kTileKeys * S;
    pdlAllowNext();
    pdlWaitForPrevious();  // q and this step's cache entries come from the kernel before

    const int seq = blockIdx.z, split = blockIdx.x, splits = gridDim.x;
    const int G = numHeads / numKvHeads;
    const int chunks = (G + kHeadsPerCta - 1) / kHeadsPerCta;
    const int kvh = blockIdx.y / chunks, chunk = blockIdx.y % chunks;
    const int headBegin = kvh * G + chunk * kHeadsPerCta;
    const int nRows = min(kHeadsPerCta, G - chunk * kHeadsPerCta);
    const int ctx = contextLens[seq];
    T* outRows = out + (int64_t(seq) * numHeads + headBegin) * HD;

    if (ctx <= 0) { // padded slot of a graph bucket: defined output, no cache reads
        if (split == 0)
            for (int i = threadIdx.x; i < nRows * HD; i += kThreads) outRows[i] = fromFloat<T>(0.0f);
        return;
    }
    const int partSize = decodePartitionSize(ctx, splits, fillSplits);
    const int used = (ctx + partSize - 1) / partSize;
    if (split >= used) return;
    const int k0 = split * partSize, k1 = min(ctx, k0 + partSize);
    const int numTiles = (k1 - k0 + kTileKeys - 1) / kTileKeys;
    const int pos = ctx - 1; // the query's position
    const int32_t* blockTable = blockTables + int64_t(seq) * maxBlocksPerSeq;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;

    loadKvTile<T, HD>(ks, kCache, blockTable, k0, k1, blockSize, numKvHeads, kvh);
    copyCommit();
    loadKvTile<T, HD>(vs, vCache, blockTable, k0, k1, blockSize, numKvHeads, kvh);
    copyCommit();
    // Every warp holds the same 16 query rows (heads headBegin + r); rows past the group are zero.
    const T* qSeq = q + int64_t(seq) * qTokenStride + int64_t(headBegin) * HD;
    uint32_t qf[HD / 16][4];
    loadQFragments<HD>(qf, g < nRows ? qSeq + g * HD : nullptr, g + 8 < nRows ? qSeq + (g + 8) * HD : nullptr);

    WarpState<HD> st;
    st.init();
    float s[2][4];
    const int slice = warp * 16; // this warp's keys within each tile
    for (int i = 0; i < numTiles; ++i) {
        const int kb = k0 + i * kTileKeys;
        const bool active = kb + slice < k1;
        copyWait<1>();
        __syncthreads();
        if (active) scoreTile<T, HD, 2>(st, s, qf, ks + slice * S, kb + slice, pos, pos, scaleLog2);
        __syncthreads();
        if (i + 1 < numTiles) loadKvTile<T, HD>(ks, kCache, blockTable, kb + kTileKeys, k1, blockSize, numKvHeads, kvh);
        copyCommit();
        copyWait<1>();
        __syncthreads();
        if (active) accumulatePv<T, HD, 2>(st, s, vs + slice * S);
        __syncthreads();
        if (i + 1 < numTiles) loadKvTile<T, HD>(vs, vCache, blockTable, kb + kTileKeys, k1, blockSize, numKvHeads, kvh);
        copyCommit();
    }
    copyWait<0>();
    __syncthreads(); // the tiles' memory becomes the merge buffer

    float l0 = st.l[0], l1 = st.l[1];
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    float* mergeO = reinterpret_cast<float*>(smem); // [warp][16 rows][kMergeStride]
    if (t == 0) {
        mergeM[warp][g] = st.m[0];
        mergeM[warp][g + 8] = st.m[1];
        mergeL[warp][g] = l0;
        mergeL[warp][g + 8] = l1;
    }
#pragma unroll
    for (int nt = 0; nt < HD / 8; ++nt) {
        float* row = mergeO + (warp * 16 + g) * kMergeStride + nt * 8 + 2 * t;
        *reinterpret_cast<float2*>(row) = make_float2(st.o[nt][0], st.o[nt][1]);
        *reinterpret_cast<float2*>(row + 8 * kMergeStride) = make_float2(st.o[nt][2], st.o[nt][3]);
    }
    __syncthreads();

    // Warp 0 always saw key k0 <= pos, so M is finite; warps that saw nothing have m = -inf, weight 0.
    const int64_t rowSlot = (int64_t(seq) * numHeads + headBegin) * splits; // + r * splits + split
    for (int idx = threadIdx.x; idx < nRows * (HD / 2); idx += kThreads) {
        const int r = idx / (HD / 2), d = (idx % (HD / 2)) * 2;
        float M = -INFINITY;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) M = fmaxf(M, mergeM[w][r]);
        float L = 0.0f, o0 = 0.0f, o1 = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const float weight = exp2f(mergeM[w][r] - M);
            const float* row = mergeO + (w * 16 + r) * kMergeStride + d;
            L += mergeL[w][r] * weight;
            o0 += row[0] * weight;
            o1 += row[1] * weight;
        }
        const float inv = 1.0f / L;
        if (used == 1) {
            *reinterpret_cast<uint32_t*>(outRows + r * HD + d) = pack2<T>(o0 * inv, o1 * inv);
        } else {
            const int64_t slot = rowSlot + int64_t(r) * splits + split;
            *reinterpret_cast<float2*>(partialO + slot * HD + d) = make_float2(o0 * inv, o1 * inv);
            if (d == 0) partialLse[slot] = M + log2f(L);
        }
    }
    if (used == 1) return;

    // Publish this split; the last of the group's `used` CTAs to arrive combines them.
    __threadfence();
    __syncthreads();
    unsigned* counter = countersEnd - 1 - (int64_t(seq) * gridDim.y + blockIdx.y);
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
#pragma unroll 4
        for (int i = 0; i < used; ++i) {
            const float w = exp2f(__ldcg(partialLse + first + i) - m);
            const float2 o = __ldcg(reinterpret_cast<const float2*>(partialO + (first + i) * HD + d));
            o0 += w * o.x;
            o1 += w * o.y;
        }
        const float inv = 1.0f / rowSum[r];
        *reinterpret_cast<uint32_t*>(outRows + r * HD + d) = pack2<T>(o0 * inv, o1 * inv);
    }
    if (threadIdx.x == 0) *counter = 0u; // every CTA of the group has arrived: ready for the next launch
}

int smCount()
{
    int device = 0, sms = 0;
    BROOK_CUDA_CHECK(cudaGetDevice(&device));
    BROOK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return std::max(sms, 1);
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

// Grid splits: what a sequence of maxContextLen may use (decodePartitionSize), at least a tile each.
int decodeSplits(int numSeqs, int numHeads, int numKvHeads, int maxContextLen, int sms)
{
    if (numSeqs <= 0 || maxContextLen <= 0) return 1;
    const int64_t fill = fillSplits(numSeqs, numHeads, numKvHeads, sms);
    const int64_t longest = (int64_t(maxContextLen) + kMaxPartition - 1) / kMaxPartition;
    const int64_t useful = (int64_t(maxContextLen) + kTileKeys - 1) / kTileKeys;
    return int(std::max<int64_t>(1, std::min(std::max(fill, longest), useful)));
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
    const dim3 grid(unsigned(splits), unsigned(headGroups(shape.numHeads, shape.numKvHeads)), unsigned(batch.numSeqs));
    const int qStride = shape.qTokenStride > 0 ? shape.qTokenStride : shape.numHeads * HD;
    const float scaleLog2 = kLog2e / sqrtf(float(HD));
    launchDependent(paged_attention_decode_kernel<T, HD>, grid, dim3(kThreads), 0, stream, static_cast<const T*>(q),
                    static_cast<T*>(out), static_cast<const T*>(kCache), static_cast<const T*>(vCache),
                    batch.contextLens, batch.blockTables, batch.maxBlocksPerSeq, shape.numHeads, shape.numKvHeads,
                    shape.blockSize, qStride, scaleLog2, partialO, partialLse, countersEnd, fill);
}

} // namespace

int paged_attention_decode_splits(int numSeqs, int numHeads, int numKvHeads, int maxContextLen)
{
    if (numHeads <= 0 || numKvHeads <= 0) return 1;
    return decodeSplits(numSeqs, numHeads, numKvHeads, maxContextLen, smCount());
}

size_t paged_attention_decode_workspace_bytes(int maxSeqs, int numHeads, int numKvHeads, int headDim,
                                              int maxContextLen)
{
    if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0 || maxSeqs <= 0) return 0;
    const int sms = smCount();
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
    if (shape.numHeads <= 0 || shape.numKvHeads <= 0 || shape.numHeads % shape.numKvHeads != 0 || shape.blockSize <= 0
        || batch.numSeqs > 65535 || batch.maxBlocksPerSeq <= 0 || maxContextLen <= 0
        || headGroups(shape.numHeads, shape.numKvHeads) > 65535
        || (shape.qTokenStride != 0 && (shape.qTokenStride < shape.numHeads * shape.headDim || shape.qTokenStride % 8)))
        throw CudaError("launch_paged_attention_decode: bad shape (NH " + std::to_string(shape.numHeads) + ", KVH "
                        + std::to_string(shape.numKvHeads) + ", BS " + std::to_string(shape.blockSize) + ", seqs "
                        + std::to_string(batch.numSeqs) + ", max context " + std::to_string(maxContextLen) + ")");
    if (batch.numSeqs <= 0) return;
    const int sms = smCount();
    const int splits = decodeSplits(batch.numSeqs, shape.numHeads, shape.numKvHeads, maxContextLen, sms);
    const int fill = fillSplits(batch.numSeqs, shape.numHeads, shape.numKvHeads, sms);
    const size_t counters = size_t(batch.numSeqs) * headGroups(shape.numHeads, shape.numKvHeads) * sizeof(unsigned);
    const size_t needed = splits > 1 ? partialBytes(batch.numSeqs, splits, shape.numHeads, shape.headDim) + counters : 0;
    if (workspaceBytes < needed || (needed > 0 && workspace == nullptr))
        throw CudaError("launch_paged_attention_decode: workspace of " + std::to_string(workspaceBytes) + " bytes, "
                        + std::to_string(needed) + " needed for " + std::to_string(batch.numSeqs) + " seqs x "
                        + std::to_string(splits) + " splits (size it with paged_attention_decode_workspace_bytes)");
    float* partialO = static_cast<float*>(workspace);
    float* partialLse = nullptr;
    unsigned* countersEnd = nullptr;
    if (needed > 0) {
        partialLse = partialO + size_t(batch.numSeqs) * shape.numHeads * splits * shape.headDim;
        countersEnd = reinterpret_cast<unsigned*>(static_cast<char*>(workspace) + (workspaceBytes & ~size_t(3)));
    }
    BROOK_DISPATCH_ELEMENT_TYPE(type, T, {
        switch (shape.headDim) {
        case 32: launchDecode<T, 32>(q, out, kCache, vCache, batch, splits, fill, shape, partialO, partialLse, countersEnd, stream); break;
        case 64: launchDecode<T, 64>(q, out, kCache, vCache, batch, splits, fill, shape, partialO, partialLse, countersEnd, stream); break;
        case 128: launchDecode<T, 128>(q, out, kCache, vCache, batch, splits, fill, shape, partialO, partialLse, countersEnd, stream); break;
        default:
            throw CudaError("launch_paged_attention_decode: head dim " + std::to_string(shape.headDim)
                            + " not built (32, 64, 128)");
        }
    });
}

} // namespace brook::cuda
