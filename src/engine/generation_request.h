// The request API's data: what callers submit and what they receive back, token by token.
#pragma once

#include "engine/chat_message.h"
#include "engine/engine_metrics.h"
#include "engine/sampler.h"
#include "engine/sampling_params.h"
#include "engine/sequence.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace brook {

struct GenerationRequest {
    // Prompt text (special-token strings are parsed), chat messages (rendered with the
    // model's chat template, generation prompt added) or token ids.
    std::variant<std::string, std::vector<ChatMessage>, std::vector<int32_t>> prompt;
    SamplingParams params;
    int priority = 0;          // lower runs first under the priority policy
    std::string source;        // who asked ("chat", "api", "bench"): shown by inspectors
};

struct TokenLogprobs {
    int32_t token = 0;
    float logprob = 0.0f;
    std::vector<TokenLogprob> top;  // top-N, descending
};

// One update of a request's stream. Updates of one request arrive in order; the last one
// has finishReason set.
struct RequestOutput {
    RequestId id = 0;
    std::vector<int32_t> newTokenIds;        // generated this step (usually one)
    std::string textDelta;                   // new text, never half a UTF-8 character
    std::vector<TokenLogprobs> logprobs;     // per new token, when params.logprobs >= 0
    std::optional<FinishReason> finishReason;
    std::string stopReason;                  // the stop string or stop token id that matched
    int numPromptTokens = 0;
    int numOutputTokens = 0;                 // total so far
    double timeToFirstTokenSeconds = 0;      // set once the first token exists
    bool finished() const { return finishReason.has_value(); }
};

// Called on the engine thread; must return quickly (queue the output, post an event).
using OutputCallback = std::function<void(const RequestOutput&)>;

} // namespace brook
