// pagedAttentionFast: cpu_ops' pagedAttention (same arguments, same causal GQA over the paged
// cache, whose K must be in the Tiles layout) with the scores, the exp and the weighted sum of V
// on a CpuVectorOps path, the scores in a per-thread buffer (no allocation per head), and the
// division by the softmax denominator applied once to the output row instead of to every
// probability. Every query, a prompt's or a decode's, takes the same fp32 steps over keys
// 0..position, so its output does not depend on how its sequence was chunked or what else is in
// the step (batch invariance, docs/server.md "Determinism"; a bf16-pair kernel for prompts,
// removed for it, ran long cached prompts' attention ~2x faster: docs/benchmarks.md).
// Thread-safe for distinct `out`; runs on `pool` (when given) when the work is large enough.
#pragma once

#include "engine/cpu/cpu_ops.h"
#include "engine/cpu/cpu_thread_pool.h"
#include "engine/cpu/cpu_vector_ops.h"

namespace brook::cpu {

void pagedAttentionFast(const float* q, float* out, int n, int numHeads, int startPosition,
                        std::span<const int32_t> blockTable, const PagedKv& kv, const CpuVectorOps& ops,
                        CpuThreadPool* pool = nullptr);

// One sequence's part of a batched call: q and out are [n, NH, HD].
struct AttentionSequence {
    const float* q = nullptr;
    float* out = nullptr;
    int n = 0;
    int startPosition = 0;
    std::span<const int32_t> blockTable;
};

// Every sequence of a step in one parallel loop over (sequence, query, head), so a batch of
// short decodes spreads over the team instead of running one small loop per sequence.
void pagedAttentionBatch(std::span<const AttentionSequence> sequences, int numHeads, const PagedKv& kv,
                         const CpuVectorOps& ops, CpuThreadPool* pool = nullptr);

}  // namespace brook::cpu
