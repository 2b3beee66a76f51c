// RequestParser: an OpenAI /v1/chat/completions or /v1/completions body -> the native request
// the engine takes (token ids + SamplingParams), on the HTTP thread: chat template, tokenizing,
// defaults (the model's generation_config, max_tokens up to the context length, as vLLM does)
// and every check that can be made before submitting. Errors are 400s naming the field.
// Stateless apart from the model it reads; thread-safe.
#pragma once

#include "engine/chat_message.h"
#include "engine/sampling_params.h"
#include "server/api_error.h"
#include "server/server_context.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace brook {

enum class ApiKind { Chat, Completion };

struct ParsedPrompt {
    std::vector<int32_t> tokens;
    std::string text;   // the prompt as text (completions echo it)
    int maxTokens = 0;  // the request's max_tokens, or the default for this prompt's length
};

struct ParsedRequest {
    ApiKind kind = ApiKind::Chat;
    std::string model;                  // the served name to report back
    std::vector<ParsedPrompt> prompts;  // chat: exactly one
    SamplingParams params;              // shared by every choice (maxTokens per prompt, seed per choice)
    int n = 1;
    bool stream = false;
    bool includeUsage = false;     // stream_options.include_usage
    bool continuousUsage = false;  // stream_options.continuous_usage_stats
    int logprobs = -1;             // top-N alternatives; -1: no logprobs
    bool echo = false;
    std::string chatEcho;  // chat echo: the last message's content, when it continues
    int priority = 0;
    double tokenizeSeconds = 0;  // spent in the chat template and tokenizer (the hop trace)
    size_t numChoices() const { return prompts.size() * size_t(n); }
};

class RequestParser {
public:
    explicit RequestParser(const ServedModel& model) : m_model(model) {}

    std::optional<ApiError> parse(ApiKind kind, const nlohmann::json& body, ParsedRequest& out) const;

    // Only the chat template and tokenizer (POST /tokenize with "messages"). Message contents are
    // tokenized as text unless the body sets "special_tokens_in_content": true.
    std::optional<ApiError> renderMessages(const nlohmann::json& body, ParsedPrompt& out) const;

    // An engine error (result.h) in OpenAI's terms: the status and type by its code, `param` by its
    // field, the prompt's field being "messages" for a chat request.
    static ApiError fromEngineError(const Error& error, const char* promptField);

private:
    std::optional<ApiError> parseCommon(const nlohmann::json& body, ParsedRequest& out,
                                        std::optional<int64_t>& maxTokens) const;
    // contentSpecialTokens: special-token strings inside message contents become special tokens
    // (only /tokenize offers it; chat requests never do).
    std::optional<ApiError> parseMessages(const nlohmann::json& body, ParsedRequest& out,
                                          bool contentSpecialTokens = false) const;
    std::optional<ApiError> parsePrompts(const nlohmann::json& body, ParsedRequest& out) const;
    std::optional<ApiError> rejectUnsupported(ApiKind kind, const nlohmann::json& body) const;
    // `tools` / `tool_choice`: a 400 unless tool_choice is "none" (no tool-calling template).
    static std::optional<ApiError> rejectToolCalling(const nlohmann::json& body);

    const ServedModel& m_model;
};

}  // namespace brook
