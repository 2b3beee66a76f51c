// Paged attention for decode (one query per sequence): GQA-aware flash-decoding.
// Reference: brook::cpu::pagedAttention; test: tests/cuda/test_paged_attention.cpp.
//
// Shapes: q [numSeqs, NH, HD] (row s = sequence s, rows qTokenStride apart), out [numSeqs, NH, HD],
// k/v cache [B, BS, KVH, HD], workspace fp32: partial O [numSeqs, NH, splits, HD] then
// log2-sum-exp [numSeqs, NH, splits].
// Grid (splits, KVH * ceil(G / 16), numSeqs): a CTA takes up to 16 query heads of one kv head
// (all 8 of an ERNIE group, as the 16 MMA rows) so every K/V tile is read once for the group.
// The context of length c is cut into partitions of P = roundup64(ceil(c / splits)) keys; CTA
// `split` takes keys [split * P, min(c, (split + 1) * P)) and exits if that is empty. Its 4 warps
// each take 16 keys of every 64-key tile; a final merge in shared memory combines the warps:
//   M = max_w m_w,  L = sum_w l_w 2^(m_w - M),  O = sum_w O_w 2^(m_w - M) / L.
// One partition: O goes straight to out. Several: O and M + log2 L go to the workspace and the
// reduce kernel combines them the same way. `splits` depends only on numSeqs and maxContextLen,
// so a captured CUDA graph stays valid while context lengths change.
#include "cuda/paged_attention.h"
#include "cuda/paged_attention_common.cuh"

#include "cuda/cuda_check.h"

#include <algorithm>
#include <string>

namespace brook::cuda {
namespace {

using namespace attn;

constexpr int kHeadsPerCta = 16;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxPartition = 4096; // keys one CTA may take at maxContextLen (bounds the serial work)

template <typename T, int HD>
__global__ void __launch_bounds__(kThreads)
paged_attention_decode_kernel(const T* __restrict__ q, T* __restrict__ out, const T* __restrict__ kCache,
                              const T* __restrict__ vCache, const int32_t* __restrict__ contextLens,
                              const int32_t* __restrict__ blockTables, int maxBlocksPerSeq, int numHeads,
                              int numKvHeads, int blockSize, int qTokenStride, float scaleLog2,
                              float* __restrict__ partialO, float* __restrict__ partialLse)
{
    constexpr int S = smemStride<HD>();
    constexpr int kMergeStride = HD + 8; // floats; keeps the warps' float2 stores conflict-free
    static_assert(kWarps * 16 * kMergeStride * sizeof(float) <= 2 * kTileKeys * S * sizeof(T),
                  "merge buffer reuses the K/V tiles");
    __shared__ __align__(16) unsigned char smem[2 * kTileKeys * S * sizeof(T)];
    __shared__ float mergeM[kWarps][16];
    __shared__ float mergeL[kWarps][16];
    T* ks = reinterpret_cast<T*>(smem);
    T* vs = ks + kTileKeys * S;

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
    const int partSize = decodePartitionSize(ctx, splits);
    const int used = (ctx + partSize - 1) / partSize;
    if (split >= used) return;
    const int k0 = split * partSize, k1 = min(ctx, k0 + partSize);
    const int numTiles = (k1 - k0 + kTileKeys - 1) / kTileKeys;
    const int pos = ctx - 1; // the query's position
    const int32_t* blockTable = blockTables + int64_t(seq) * maxBlocksPerSeq;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;

    constexpr int kChunks = HD / 8;
    for (int idx = threadIdx.x; idx < 16 * kChunks; idx += kThreads) {
        const int r = idx / kChunks, c = idx % kChunks;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < nRows) v = *reinterpret_cast<const uint4*>(q + int64_t(seq) * qTokenStride + int64_t(headBegin + r) * HD + c * 8);
        *reinterpret_cast<uint4*>(ks + r * S + c * 8) = v;
    }
    __syncthreads();
    uint32_t qf[HD / 16][4];
    loadQFragments<HD>(qf, ks);
    __syncthreads();
    loadKvTile<T, HD>(ks, kCache, blockTable, k0, k1, blockSize, numKvHeads, kvh);
    copyCommit();
    loadKvTile<T, HD>(vs, vCache, blockTable, k0, k1, blockSize, numKvHeads, kvh);
    copyCommit();

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
            const int64_t slot = (int64_t(seq) * numHeads + headBegin + r) * splits + split;
            *reinterpret_cast<float2*>(partialO + slot * HD + d) = make_float2(o0 * inv, o1 * inv);
            if (d == 0) partialLse[slot] = M + log2f(L);
        }
    }
}

// Combines the partitions of sequences that used more than one. Grid (NH, numSeqs), HD threads.
template <typename T, int HD>
__global__ void __launch_bounds__(HD)
paged_attention_decode_reduce_kernel(T* __restrict__ out, const int32_t* __restrict__ contextLens, int numHeads,
                                     int splits, const float* __restrict__ partialO,
                                     const float* __restrict__ partialLse)
{
    const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
    const int ctx = contextLens[seq];
    if (ctx <= 0) return;
    const int partSize = decodePartitionSize(ctx, splits);
    const int used = (ctx + partSize - 1) / partSize;
    if (used <= 1) return; // the attention kernel wrote the output itself
    const int64_t base = (int64_t(seq) * numHeads + head) * splits;
    const float* lse = partialLse + base;
    float M = -INFINITY;
    for (int i = 0; i < used; ++i) M = fmaxf(M, lse[i]);
    float acc = 0.0f, sum = 0.0f;
    for (int i = 0; i < used; ++i) {
        const float w = exp2f(lse[i] - M);
        acc += w * partialO[(base + i) * HD + d];
        sum += w;
    }
    out[(int64_t(seq) * numHeads + head) * HD + d] = fromFloat<T>(acc / sum);
}

int smCount()
{
    int device = 0, sms = 0;
    BROOK_CUDA_CHECK(cudaGetDevice(&device));
    BROOK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return std::max(sms, 1);
}

int decodeSplits(int numSeqs, int numHeads, int numKvHeads, int maxContextLen, int sms)
{
    if (numSeqs <= 0 || maxContextLen <= 0) return 1;
    const int G = numHeads / numKvHeads;
    const int64_t ctasPerSplit = int64_t(numSeqs) * numKvHeads * ((G + kHeadsPerCta - 1) / kHeadsPerCta);
    const int64_t fill = (2 * int64_t(sms) + ctasPerSplit - 1) / ctasPerSplit;         // two CTAs per SM
    const int64_t longest = (int64_t(maxContextLen) + kMaxPartition - 1) / kMaxPartition; // bound serial work
    const int64_t useful = (int64_t(maxContextLen) + kTileKeys - 1) / kTileKeys;        // at least a tile each
    return int(std::max<int64_t>(1, std::min(std::max(fill, longest), useful)));
}

size_t workspaceBytes(int numSeqs, int splits, int numHeads, int headDim)
{
    return size_t(numSeqs) * numHeads * splits * (headDim + 1) * sizeof(float);
}

template <typename T, int HD>
void launchDecode(const void* q, void* out, const void* kCache, const void* vCache, const AttentionBatch& batch,
                  int splits, const AttentionShape& shape, float* partialO, float* partialLse, cudaStream_t stream)
{
    const int G = shape.numHeads / shape.numKvHeads;
    const int chunks = (G + kHeadsPerCta - 1) / kHeadsPerCta;
    const dim3 grid(unsigned(splits), unsigned(shape.numKvHeads * chunks), unsigned(batch.numSeqs));
    const int qStride = shape.qTokenStride > 0 ? shape.qTokenStride : shape.numHeads * HD;
    const float scaleLog2 = kLog2e / sqrtf(float(HD));
    paged_attention_decode_kernel<T, HD><<<grid, kThreads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<T*>(out), static_cast<const T*>(kCache), static_cast<const T*>(vCache),
        batch.contextLens, batch.blockTables, batch.maxBlocksPerSeq, shape.numHeads, shape.numKvHeads,
        shape.blockSize, qStride, scaleLog2, partialO, partialLse);
    BROOK_CUDA_CHECK_LAUNCH();
    if (splits > 1) {
        paged_attention_decode_reduce_kernel<T, HD><<<dim3(unsigned(shape.numHeads), unsigned(batch.numSeqs)), HD, 0, stream>>>(
            static_cast<T*>(out), batch.contextLens, shape.numHeads, splits, partialO, partialLse);
        BROOK_CUDA_CHECK_LAUNCH();
    }
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
    if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0) return 0;
    const int sms = smCount();
    size_t most = 0;
    for (int n = 1; n <= maxSeqs; ++n) {
        const int splits = decodeSplits(n, numHeads, numKvHeads, maxContextLen, sms);
        if (splits > 1) most = std::max(most, workspaceBytes(n, splits, numHeads, headDim));
    }
    return most;
}

void launch_paged_attention_decode(ElementType type, const void* q, void* out, const void* kCache, const void* vCache,
                                   const AttentionBatch& batch, int maxContextLen, const AttentionShape& shape,
                                   void* workspace, size_t workspaceBytesGiven, cudaStream_t stream)
{
    if (shape.numHeads <= 0 || shape.numKvHeads <= 0 || shape.numHeads % shape.numKvHeads != 0 || shape.blockSize <= 0
        || batch.numSeqs > 65535 || batch.maxBlocksPerSeq <= 0 || maxContextLen <= 0
        || int64_t(shape.numKvHeads) * ((shape.numHeads / std::max(shape.numKvHeads, 1) + 15) / 16) > 65535
        || (shape.qTokenStride != 0 && (shape.qTokenStride < shape.numHeads * shape.headDim || shape.qTokenStride % 8)))
        throw CudaError("launch_paged_attention_decode: bad shape (NH " + std::to_string(shape.numHeads) + ", KVH "
                        + std::to_string(shape.numKvHeads) + ", BS " + std::to_string(shape.blockSize) + ", seqs "
                        + std::to_string(batch.numSeqs) + ", max context " + std::to_string(maxContextLen) + ")");
    if (batch.numSeqs <= 0) return;
    const int splits = paged_attention_decode_splits(batch.numSeqs, shape.numHeads, shape.numKvHeads, maxContextLen);
    const size_t needed = splits > 1 ? workspaceBytes(batch.numSeqs, splits, shape.numHeads, shape.headDim) : 0;
    if (workspaceBytesGiven < needed || (needed > 0 && workspace == nullptr))
        throw CudaError("launch_paged_attention_decode: workspace of " + std::to_string(workspaceBytesGiven)
                        + " bytes, " + std::to_string(needed) + " needed for " + std::to_string(batch.numSeqs)
                        + " seqs x " + std::to_string(splits) + " splits");
    float* partialO = static_cast<float*>(workspace);
    float* partialLse = partialO ? partialO + size_t(batch.numSeqs) * shape.numHeads * splits * shape.headDim : nullptr;
    BROOK_DISPATCH_ELEMENT_TYPE(type, T, {
        switch (shape.headDim) {
        case 32: launchDecode<T, 32>(q, out, kCache, vCache, batch, splits, shape, partialO, partialLse, stream); break;
        case 64: launchDecode<T, 64>(q, out, kCache, vCache, batch, splits, shape, partialO, partialLse, stream); break;
        case 128: launchDecode<T, 128>(q, out, kCache, vCache, batch, splits, shape, partialO, partialLse, stream); break;
        default:
            throw CudaError("launch_paged_attention_decode: head dim " + std::to_string(shape.headDim)
                            + " not built (32, 64, 128)");
        }
    });
}

} // namespace brook::cuda
