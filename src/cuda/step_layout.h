// StepLayout: how one step's sequences are laid out in StepInputs' fixed buffers, and how large
// those buffers are for the engine's limits. StepInputs::upload and the load plan follow these
// two functions, so a step the plan allows always fits. Pure C++ (no CUDA): tested without a GPU.
#pragma once

#include "engine/backend.h"

#include <span>

namespace brook::cuda {

// What one step occupies: token rows, sequences (real, dummy and padding) and sampled rows.
struct StepShape {
    int tokens = 0;
    int seqs = 0;
    int sampled = 0;
};

// The engine's per-step limits (--max-num-batched-tokens, --max-num-seqs).
struct StepLimits {
    int maxNumBatchedTokens = 8192;
    int maxNumSeqs = 256;
};

// A padded single-sequence prefill (a prefill graph's layout) ends with one padding sequence that
// is never sampled: the buffers hold one sequence more than --max-num-seqs for it.
inline constexpr int kPaddingSequences = 1;

// The buffers StepInputs allocates for these limits. Tokens cover max(max_num_batched_tokens,
// max_num_seqs), since a decode step of every sequence has one token each.
StepShape stepCapacity(StepLimits limits);

// The layout of `batch`, padded with one-token dummy sequences up to padToSeqs (a decode graph's
// bucket), or to padToTokens tokens (a single-sequence prefill graph: the batch's one sequence,
// or a one-token dummy when it is empty, then the padding sequence). Throws std::invalid_argument
// when padToTokens comes with more than one sequence or with padToSeqs, or the batch has more
// tokens than padToTokens.
StepShape stepShape(std::span<const BatchSequence> batch, int padToSeqs, int padToTokens);

// Whether `shape` fits `capacity`.
constexpr bool fits(const StepShape& shape, const StepShape& capacity)
{
    return shape.tokens <= capacity.tokens && shape.seqs <= capacity.seqs && shape.sampled <= capacity.sampled;
}

}  // namespace brook::cuda
