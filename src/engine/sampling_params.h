// SamplingParams: how one request picks its tokens and when it stops. Plain data; the
// meanings follow vLLM's SamplingParams so that server requests map onto it one to one.
#pragma once

#include "engine/result.h"
#include "engine/structured_output.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace brook {

struct SamplingParams {
    float temperature = 1.0f;        // 0 = greedy
    float topP = 1.0f;               // 1 = off
    int topK = 0;                    // 0 or -1 = off
    float minP = 0.0f;               // 0 = off
    float repetitionPenalty = 1.0f;  // 1 = off; applies to prompt and output tokens (HF rule)
    float presencePenalty = 0.0f;    // OpenAI rule, output tokens only
    float frequencyPenalty = 0.0f;   // OpenAI rule, output tokens only
    std::optional<uint64_t> seed;    // unset: the engine picks one at submit
    int maxTokens = 16;
    int minTokens = 0;  // stop tokens are masked until this many are generated
    bool ignoreEos = false;
    std::vector<std::string> stop;  // stop strings; matched across token boundaries
    std::vector<int32_t> stopTokenIds;
    bool includeStopStrInOutput = false;
    int logprobs = -1;  // -1: none; N >= 0: chosen token's logprob + top-N
    bool skipSpecialTokens = true;
    StructuredOutput structured;  // none: free text

    bool greedy() const { return temperature <= 0.0f; }
};

// The largest top-N of logprobs a request may ask for (vLLM's default max_logprobs).
inline constexpr int kMaxLogprobs = 20;

// The most stop strings a request may give. OpenAI takes 4; 64 leaves room for vLLM-style use
// while keeping the per-token stop check and its setup small.
inline constexpr size_t kMaxStopStrings = 64;

// Checks ranges; the message names the field as the OpenAI API spells it ("top_p must be in
// (0, 1], got 1.5").
Result<void> validateSamplingParams(const SamplingParams& params, int vocabSize);

}  // namespace brook
