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
// Key tiles stream through one K and one V buffer: the next K tile loads while P.V runs and the
// next V tile while the scores run (cp.async on sm_80+).
#include "cuda/paged_attention.h"
#include "cuda/paged_attention_common.cuh"

#include "cuda/cuda_check.h"

#include <string>

namespace brook::cuda {
namespace {

using namespace attn;

constexpr int kRowsPerCta = 64;

template <typename T, int HD>
__global__ void __launch_bounds__(kThreads)
    paged_attention_prefill_kernel(const T* __restrict__ q, T* __restrict__ out, const T* __restrict__ kCache,
                                   const T* __restrict__ vCache, const int32_t* __restrict__ queryStart,
                                   const int32_t* __restrict__ contextLens, const int32_t* __restrict__ blockTables,
                                   int maxBlocksPerSeq, int numHeads, int numKvHeads, int blockShift, int qTokenStride,
                                   float scaleLog2)
{
    constexpr int S = smemStride<HD>();
    __shared__ __align__(16) T ks[kTileKeys * S];
    __shared__ __align__(16) T vs[kTileKeys * S];

    const int seq = blockIdx.z, kvh = blockIdx.y;
    const int tile = gridDim.x - 1 - blockIdx.x;
    const int G = numHeads / numKvHeads;
    const int qBegin = queryStart[seq];
    const int n = queryStart[seq + 1] - qBegin;
    const int start = contextLens[seq] - n;  // position of the sequence's first new token
    const int rows = n * G;
    const int rowBegin = tile * kRowsPerCta;
    if (rowBegin >= rows) return;
    if (start < 0) {  // malformed or padded (context shorter than its queries): zeros, no cache reads
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
    const int numTiles = (keyEnd + kTileKeys - 1) / kTileKeys;
    const int32_t* blockTable = blockTables + int64_t(seq) * maxBlocksPerSeq;

    // First K/V tiles in flight, then this lane's Q rows (g, g + 8 of the warp) behind them.
    loadKvTile<T, HD>(ks, kCache, blockTable, 0, keyEnd, blockShift, numKvHeads, kvh);
    copyCommit();
    loadKvTile<T, HD>(vs, vCache, blockTable, 0, keyEnd, blockShift, numKvHeads, kvh);
    copyCommit();
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
    for (int i = 0; i < numTiles; ++i) {
        const int kb = i * kTileKeys;
        const bool active = warpHasRows && kb <= warpMaxPos;
        copyWait<1>();  // K tile i landed (V tile i may still be in flight)
        __syncthreads();
        if (active) scoreTile<T, HD, kTileKeys / 8>(st, s, qf, ks, kb, pos0, pos1, scaleLog2);
        __syncthreads();  // every warp is done with K tile i
        if (i + 1 < numTiles)
            loadKvTile<T, HD>(ks, kCache, blockTable, kb + kTileKeys, keyEnd, blockShift, numKvHeads, kvh);
        copyCommit();
        copyWait<1>();  // V tile i landed
        __syncthreads();
        if (active) accumulatePv<T, HD, kTileKeys / 8>(st, s, vs);
        __syncthreads();  // every warp is done with V tile i
        if (i + 1 < numTiles)
            loadKvTile<T, HD>(vs, vCache, blockTable, kb + kTileKeys, keyEnd, blockShift, numKvHeads, kvh);
        copyCommit();
    }
    copyWait<0>();

    // Normalise and store: lane (g, t) holds dims 8n + 2t, 8n + 2t + 1 of rows g and g + 8.
    float l0 = st.l[0], l1 = st.l[1];
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const int t = lane & 3;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int R = warpFirstRow + g + 8 * half;
        if (R >= rows) continue;
        const float inv = 1.0f / (half == 0 ? l0 : l1);
        const int64_t token = qBegin + R / G;
        const int head = kvh * G + R % G;
        T* dst = out + (token * numHeads + head) * HD + 2 * t;
#pragma unroll
        for (int nt = 0; nt < HD / 8; ++nt)
            *reinterpret_cast<uint32_t*>(dst + nt * 8) =
                pack2<T>(st.o[nt][2 * half] * inv, st.o[nt][2 * half + 1] * inv);
    }
}

template <typename T, int HD>
void launchPrefill(const void* q, void* out, const void* kCache, const void* vCache, const AttentionBatch& batch,
                   int maxQueryLen, const AttentionShape& shape, cudaStream_t stream)
{
    const int G = shape.numHeads / shape.numKvHeads;
    const int64_t tiles = (int64_t(maxQueryLen) * G + kRowsPerCta - 1) / kRowsPerCta;
    const dim3 grid(unsigned(tiles), unsigned(shape.numKvHeads), unsigned(batch.numSeqs));
    const int qStride = shape.qTokenStride > 0 ? shape.qTokenStride : shape.numHeads * HD;
    const float scaleLog2 = kLog2e / sqrtf(float(HD));
    paged_attention_prefill_kernel<T, HD><<<grid, kThreads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<T*>(out), static_cast<const T*>(kCache), static_cast<const T*>(vCache),
        batch.queryStart, batch.contextLens, batch.blockTables, batch.maxBlocksPerSeq, shape.numHeads, shape.numKvHeads,
        blockShiftOf(shape.blockSize), qStride, scaleLog2);
    BROOK_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_paged_attention_prefill(ElementType type, const void* q, void* out, const void* kCache, const void* vCache,
                                    const AttentionBatch& batch, int maxQueryLen, const AttentionShape& shape,
                                    cudaStream_t stream)
{
    if (shape.numHeads <= 0 || shape.numKvHeads <= 0 || shape.numHeads % shape.numKvHeads != 0 ||
        blockShiftOf(shape.blockSize) < 0 || shape.numKvHeads > 65535 || batch.numSeqs > 65535 ||
        batch.maxBlocksPerSeq <= 0 ||
        (shape.qTokenStride != 0 && (shape.qTokenStride < shape.numHeads * shape.headDim || shape.qTokenStride % 8)))
        throw CudaError("launch_paged_attention_prefill: bad shape (NH " + std::to_string(shape.numHeads) + ", KVH " +
                        std::to_string(shape.numKvHeads) + ", BS " + std::to_string(shape.blockSize) + ", seqs " +
                        std::to_string(batch.numSeqs) + ", q stride " + std::to_string(shape.qTokenStride) + ")");
    if (batch.numSeqs <= 0 || maxQueryLen <= 0) return;
    BROOK_DISPATCH_ELEMENT_TYPE(type, T, {
        switch (shape.headDim) {
        case 32: launchPrefill<T, 32>(q, out, kCache, vCache, batch, maxQueryLen, shape, stream); break;
        case 64: launchPrefill<T, 64>(q, out, kCache, vCache, batch, maxQueryLen, shape, stream); break;
        case 128: launchPrefill<T, 128>(q, out, kCache, vCache, batch, maxQueryLen, shape, stream); break;
        default:
            throw CudaError("launch_paged_attention_prefill: head dim " + std::to_string(shape.headDim) +
                            " not built (32, 64, 128)");
        }
    });
}

}  // namespace brook::cuda
