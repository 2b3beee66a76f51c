// Sampler: picks the next token of one sequence from its fp32 logits row, on the CPU.
// Order (as vLLM): structured-output mask -> penalties -> min_tokens mask -> logprobs of the raw logits ->
// greedy, or temperature -> top-k -> top-p -> min-p -> draw. The draw is a pure function of
// (seed, step) so a seeded request gives the same text alone or batched.
// Also the reference the CUDA sampler is checked against. Stateless; thread-safe.
#pragma once

#include "engine/sampling_params.h"

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace brook {

struct TokenLogprob {
    int32_t token = 0;
    float logprob = 0.0f;  // natural log, from the model's raw logits
};

struct SampleResult {
    int32_t token = 0;
    float logprob = 0.0f;                   // of the chosen token, raw logits (when asked)
    std::vector<TokenLogprob> topLogprobs;  // top-N by raw logit, descending (when asked)
};

struct SamplingContext {
    const SamplingParams* params = nullptr;
    std::span<const int32_t> promptTokens;
    std::span<const int32_t> outputTokens;  // generated so far
    std::span<const int32_t> stopTokenIds;  // eos + the request's stop_token_ids (masked under min_tokens)
    uint64_t seed = 0;
    int step = 0;  // index of the token being sampled (== outputTokens.size())
    // Structured output: bit t of word t / 32 set = token t may be sampled; empty = any token.
    // Applied first, so logprobs are those of the masked row (as vLLM's grammar bitmask).
    std::span<const uint32_t> allowedTokens;
};

// Other threads for one row's passes over the vocabulary (the max, the probabilities, the top-p
// histogram): run(parts, fn) calls fn(0) .. fn(parts - 1), possibly at once, and returns when all
// are done; fn must not call run. The token is the same whatever the parts: each split pass is
// exact (elementwise, a max, integer sums).
struct SamplerThreads {
    using Run = std::function<void(int parts, const std::function<void(int part)>& fn)>;
    int parts = 1;
    Run run;
};

class Sampler {
public:
    // `logits` is the sequence's [V] row; it is modified in place (penalties, masks).
    static SampleResult sample(std::span<float> logits, const SamplingContext& context,
                               const SamplerThreads& threads = {});

    // A uniform draw in [0, 1) from (seed, step): splitmix64-based, identical on CPU and GPU.
    static double uniform(uint64_t seed, int step);
};

}  // namespace brook
