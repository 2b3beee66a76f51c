// computePromptLogits: teacher-forced logits at every position of a token sequence, through a
// backend's ordinary forward (Backend::logits) and the KV cache, so a quantized model is measured
// exactly as it serves (brook-bench quality). The Engine runs it on its thread between steps
// (Engine::promptLogits); nothing else may touch the backend or the block manager meanwhile.
#pragma once

#include "engine/backend.h"
#include "engine/block_manager.h"
#include "engine/result.h"

#include <cstdint>
#include <span>
#include <vector>

namespace brook {

// Returns fp32 logits [n, V]: row i is the model's distribution of the token after
// tokens[0..i]. One single-token pass per position (Backend::logits returns only the last row
// of a sequence), with KV blocks borrowed from `blocks` and given back before returning.
// Errors: empty input, or not enough free KV blocks for n tokens.
Result<std::vector<float>> computePromptLogits(Backend& backend, BlockManager& blocks, std::span<const int32_t> tokens);

}  // namespace brook
