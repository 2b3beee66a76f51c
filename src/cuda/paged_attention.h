// Paged attention on the GPU: causal GQA attention of a batch's new query tokens against the
// paged KV cache (which already holds the new tokens' K/V). Two entry points: prefill (any
// query lengths, chunked prefill reading a cached prefix) and decode (one query per sequence,
// split along the sequence, CUDA-graph safe). CPU reference: brook::cpu::pagedAttention.
//
// Letters: T tokens in the batch, NH query heads, KVH kv heads, G = NH / KVH, HD head dim
// (32, 64 or 128), B cache blocks of BS slots. Math per query row at position p of head h:
//   out = softmax_j(q . k_j / sqrt(HD)) v_j over cache positions j = 0..p of kv head h / G,
// scores, softmax and accumulation in fp32; P is rounded to the element type for the P.V MMA.
//
// Thread-safety: launchers only enqueue work on `stream`; call them from the thread that owns
// the stream. They throw CudaError on bad arguments or launch failures (caught at the backend
// edge), never inside a CUDA graph capture unless the arguments are wrong.
#pragma once

#include "cuda/cuda_dtype.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace brook::cuda {

// All pointers are device memory.
struct AttentionBatch {
    int numSeqs = 0;
    const int32_t* queryStart = nullptr;   // [numSeqs + 1]: seq s owns rows queryStart[s] .. queryStart[s+1]-1 of q/out
    const int32_t* contextLens = nullptr;  // [numSeqs]: cache tokens after this step (prefix + new); row i of s sits at
                                           //   position contextLens[s] - n_s + i. Decode: <= 0 marks a padded slot.
    const int32_t* blockTables =
        nullptr;  // [numSeqs, maxBlocksPerSeq] block ids; entries past the context are never read
    int maxBlocksPerSeq = 0;
};

struct AttentionShape {
    int numHeads = 0;    // NH
    int numKvHeads = 0;  // KVH; NH % KVH == 0
    int headDim = 0;     // HD: 32, 64 or 128
    int blockSize = 16;  // BS: slots per cache block, a power of two
    int qTokenStride =
        0;  // elements between consecutive tokens' q rows; 0 = NH * HD (lets q live in a fused QKV buffer)
};

// Split-KV for prefill tiles too few to fill the GPU (a short chunk over a long cached prefix: a
// prefix-cache hit). The launch splits each tile's keys into ranges when the CTAs that have rows
// fill less than one wave of the GPU and the contexts are long enough, writing fp32 partials to `workspace` and merging
// them in a second kernel, or (sm_90) merging them inside a thread-block cluster. Default-constructed: never splits.
struct PrefillSplit {
    int numTokens = 0;      // T of the batch (queryStart[numSeqs])
    int maxContextLen = 0;  // >= every contextLens[s]: sizes the key ranges
    void* workspace = nullptr;
    size_t workspaceBytes = 0;  // paged_attention_prefill_workspace_bytes; its capacity bounds the splits
};
// Token-splits (tokens x splits) the workspace holds: a cached chat turn's 128-token bucket x 12
// splits fits; larger batches have the tiles to fill the GPU with fewer splits or none.
constexpr int kPrefillSplitRowCapacity = 2048;
size_t paged_attention_prefill_workspace_bytes(int numHeads, int headDim);
// Key ranges per tile the launch uses for this batch (1: no split). Exposed for tests and logs.
int paged_attention_prefill_splits(int numSeqs, int maxQueryLen, const AttentionShape& shape,
                                   const PrefillSplit& split);
// Whether those ranges merge inside thread-block clusters (sm_90 with
// CudaFeatures::threadBlockClusters: up to 8 ranges, when every tile's cluster fits on the GPU at
// once; no workspace writes, no merge kernel) rather than through the workspace.
bool paged_attention_prefill_merges_in_cluster(int numSeqs, int maxQueryLen, const AttentionShape& shape,
                                               const PrefillSplit& split);

// Prefill / mixed batches. q: [T, NH, HD] (RoPE applied; rows qTokenStride apart), out: [T, NH, HD],
// kCache / vCache: [B, BS, KVH, HD] of this layer. maxQueryLen >= every n_s (host-side bound; it
// sizes the grid, so an over-estimate only adds CTAs that exit at once). A sequence with
// contextLens[s] < n_s (a padding slot, context 0) gets zero output. `split` (optional) lets the
// launch split the keys when the grid is small (above).
// Both launchers: q, out and the caches 16-byte aligned, qTokenStride a multiple of 8.
void launch_paged_attention_prefill(ElementType type, const void* q, void* out, const void* kCache, const void* vCache,
                                    const AttentionBatch& batch, int maxQueryLen, const AttentionShape& shape,
                                    cudaStream_t stream, const PrefillSplit& split = {});

// Decode: sequence s has exactly one query, row s of q/out (queryStart is not read). The grid and
// the split count depend only on numSeqs and maxContextLen (fixed at graph capture); each launch
// spreads a sequence's actual context over the splits, and splits past it exit at once, so a
// captured graph stays correct when contextLens / blockTables change between replays.
// Padded slots (contextLens[s] <= 0) get a zero output and read nothing.
// workspace: device memory of paged_attention_decode_workspace_bytes(maxSeqs, ...) bytes, ZEROED ONCE
// after allocation (cudaMemset): its tail holds arrival counters that every launch leaves at zero.
// Use one workspace per stream (launches sharing it must not overlap), and pass the full size
// every time (the counters are found from the end). One launch = one kernel, no host sync.
void launch_paged_attention_decode(ElementType type, const void* q, void* out, const void* kCache, const void* vCache,
                                   const AttentionBatch& batch, int maxContextLen, const AttentionShape& shape,
                                   void* workspace, size_t workspaceBytes, cudaStream_t stream);

// Splits along the sequence the decode launch uses for this batch size (reads the current
// device's SM count). Exposed for logging and tests.
int paged_attention_decode_splits(int numSeqs, int numHeads, int numKvHeads, int maxContextLen);

// Workspace that serves every decode launch with numSeqs <= maxSeqs at this maxContextLen on the
// current device: split partials, fp32 [numSeqs, NH, splits, HD + 1], then maxSeqs * KVH *
// ceil(G / 16) counters. 0 when no batch size splits (then pass nullptr, 0).
size_t paged_attention_decode_workspace_bytes(int maxSeqs, int numHeads, int numKvHeads, int headDim,
                                              int maxContextLen);

}  // namespace brook::cuda
