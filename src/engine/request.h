// The request API's vocabulary, all a front end needs to talk to the Engine (engine.h): what
// callers submit (GenerationRequest), what they receive back token by token (RequestOutput), how a
// request ended (FinishReason) and what an inspector sees of a live request (RequestSnapshot).
// Plain data; nothing here reaches into the scheduler, the KV blocks or a backend.
#pragma once

#include "engine/chat_message.h"
#include "engine/sampler.h"
#include "engine/sampling_params.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace brook {

using RequestId = uint64_t;
using Clock = std::chrono::steady_clock;

enum class FinishReason { Stop, Length, Abort };
const char* finishReasonName(FinishReason reason);  // "stop", "length", "abort" (OpenAI's words)

struct GenerationRequest {
    // Prompt text (special-token strings are parsed), chat messages (rendered with the
    // model's chat template, generation prompt added) or token ids.
    std::variant<std::string, std::vector<ChatMessage>, std::vector<int32_t>> prompt;
    SamplingParams params;
    int priority = 0;    // lower runs first under the priority policy
    std::string source;  // who asked ("chat", "api", "bench"): shown by inspectors
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
    std::vector<int32_t> newTokenIds;     // generated this step (usually one)
    std::string textDelta;                // new text, never half a UTF-8 character
    std::vector<TokenLogprobs> logprobs;  // per new token, when params.logprobs >= 0
    std::optional<FinishReason> finishReason;
    std::string stopReason;  // the stop string or stop token id that matched
    int numPromptTokens = 0;
    int numOutputTokens = 0;             // total so far
    int numCachedTokens = 0;             // prompt tokens the prefix cache supplied; set with the first token
    double timeToFirstTokenSeconds = 0;  // set once the first token exists
    double queueSeconds = 0;             // arrival to first scheduled (wake-up and queue); with the first token
    bool finished() const { return finishReason.has_value(); }
};

// Called on the engine thread; must return quickly (queue the output, post an event).
using OutputCallback = std::function<void(const RequestOutput&)>;

// Where a live request is, as vLLM's request-level metrics split its time.
enum class RequestPhase { Queued = 0, Prefill = 1, Decode = 2, Preempted = 3 };
inline constexpr int kNumRequestPhases = 4;
const char* requestPhaseName(RequestPhase phase);  // "queued", "prefill", "decode", "preempted"

struct RequestSnapshot {
    RequestId id = 0;
    std::string source;  // GenerationRequest::source ("chat", "api", ...)
    RequestPhase phase = RequestPhase::Queued;
    int promptTokens = 0;
    int generatedTokens = 0;
    int preemptions = 0;
    double ageSeconds = 0;                                 // since arrival
    std::array<double, kNumRequestPhases> phaseSeconds{};  // indexed by RequestPhase
    double secondsIn(RequestPhase p) const { return phaseSeconds[size_t(p)]; }
};

}  // namespace brook
