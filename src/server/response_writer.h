// ResponseWriter: OpenAI's response shapes for one chat or completions call: the whole
// response (chat.completion / text_completion) or its stream of SSE events
// (chat.completion.chunk / text_completion chunks, the usage chunk, "data: [DONE]"), from the
// engine's per-token outputs. Every shape validates against OpenAI's published schemas
// (test_openai_schemas): no null system_fingerprint, `refusal` in messages and chat logprobs, no
// "abort" finish_reason. Logprobs come as OpenAI writes them (chat: content[] with bytes and
// top_logprobs; completions: tokens / token_logprobs / top_logprobs / text_offset).
// Objects keep OpenAI's field order (id, object, created, model, choices, usage).
// One per API call; used by one HTTP thread.
#pragma once

#include "engine/request.h"
#include "server/api_error.h"
#include "server/request_parser.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace brook {

class Tokenizer;

// What one choice has produced so far.
struct ChoiceState {
    std::string text;
    std::vector<int32_t> tokens;
    std::vector<TokenLogprobs> logprobs;
    std::optional<FinishReason> finish;
    std::string stopReason;
    int outputTokens = 0;
    int cachedTokens = 0;   // prompt tokens the prefix cache supplied (usage.prompt_tokens_details)
    bool started = false;   // streaming: the opening chunk (role, echo) went out
    size_t textOffset = 0;  // completions logprobs: characters emitted before the next token
};

class ResponseWriter {
public:
    ResponseWriter(const ParsedRequest& request, const Tokenizer& tokenizer);

    const std::string& id() const { return m_id; }
    static void accumulate(ChoiceState& state, const RequestOutput& output);

    // The whole (non-streaming) response.
    nlohmann::ordered_json response(const std::vector<ChoiceState>& choices) const;

    // Streaming: folds `output` into states[choice] and appends the SSE events it yields to `out`
    // (one buffer for a whole batch of tokens, reused from write to write).
    void appendStreamEvents(std::string& out, size_t choice, const RequestOutput& output,
                            std::vector<ChoiceState>& states) const;
    std::string streamEvents(size_t choice, const RequestOutput& output, std::vector<ChoiceState>& states) const
    {
        std::string out;
        appendStreamEvents(out, choice, output, states);
        return out;
    }
    // After every choice finished: the usage chunk (when asked) and "data: [DONE]"; when a choice
    // was aborted, the abortedError() event and "data: [DONE]" instead.
    std::string streamEnd(const std::vector<ChoiceState>& states) const;
    // What a call whose choice was aborted (server shutdown) answers: a 503, streamed or not.
    static ApiError abortedError();
    // An error in the middle of a stream (timeout): {"error": ...} then [DONE].
    static std::string streamError(const ApiError& error);
    static std::string sseEvent(const nlohmann::ordered_json& data);

private:
    nlohmann::ordered_json usage(const std::vector<ChoiceState>& states) const;
    // One chunk's SSE event: {id, object, created, model, choices: [choice], usage} ("usage" null
    // when only include_usage asks for it, absent when nothing does). The fields every chunk
    // shares are serialized once per call, not once per token.
    void appendChunkEvent(std::string& out, const nlohmann::ordered_json& choice,
                          const nlohmann::ordered_json* usage) const;
    nlohmann::ordered_json logprobsJson(const std::vector<TokenLogprobs>& logprobs, size_t textOffset) const;
    nlohmann::ordered_json stopReasonJson(const std::string& stopReason) const;
    std::string tokenText(int32_t token) const;
    static nlohmann::ordered_json finishJson(const std::optional<FinishReason>& finish);
    std::string echoText(size_t choice) const;

    const ParsedRequest& m_request;
    const Tokenizer& m_tokenizer;
    std::string m_id;
    int64_t m_created;
    int m_promptTokens = 0;   // every prompt counted once, as OpenAI and vLLM count them
    std::string m_chunkHead;  // "data: {\"id\":...,\"model\":...,\"choices\":["
};

}  // namespace brook
