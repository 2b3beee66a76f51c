// pagedAttentionFast: cpu_ops' pagedAttention (same arguments, same causal GQA over the paged
// cache, whose K must be in the Tiles layout) with the scores, the exp and the weighted sum of V
// on a CpuVectorOps path, the scores in a per-thread buffer (no allocation per head), and the
// division by the softmax denominator applied once to the output row instead of to every
// probability.
// Thread-safe for distinct `out`; runs on `pool` (when given) when the work is large enough.
#pragma once

#include "engine/cpu/cpu_ops.h"
#include "engine/cpu/cpu_thread_pool.h"
#include "engine/cpu/cpu_vector_ops.h"

namespace brook::cpu {

// How sequences with more than one new token (prompts, chunks of one) compute attention. Fp32:
// as decodes do. Bf16 (only where the CPU has AVX-512 BF16): the sequence's K and V, its queries
// and their probabilities rounded to bf16 pairs, both products in vdpbf16ps with fp32 sums
// (cpu_attention_bf16.h), about twice as fast; the backend picks it unless its weights are
// fp32 (CpuBackend::m_promptAttention). Decodes always run in fp32.
enum class PromptAttention { Fp32, Bf16 };

void pagedAttentionFast(const float* q, float* out, int n, int numHeads, int startPosition,
                        std::span<const int32_t> blockTable, const PagedKv& kv, const CpuVectorOps& ops,
                        CpuThreadPool* pool = nullptr, PromptAttention prompts = PromptAttention::Fp32);

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
                         const CpuVectorOps& ops, CpuThreadPool* pool = nullptr,
                         PromptAttention prompts = PromptAttention::Fp32);

}  // namespace brook::cpu
