// PromptBuilder: the one path from a request's prompt to the tokens the engine runs, and the one
// context rule, for every front end (the engine's submit, the server's parser, the app's chat,
// brook-run):
//   - text: special-token strings parsed; chat messages: encodeChat (the model's template, message
//     contents as plain text); token ids: checked against the vocabulary;
//   - the context check in vLLM's words: prompt + max_tokens within max_model_len and within what
//     the whole KV cache holds;
//   - max_tokens when the caller gives none: what the context leaves, capped by generation_config's
//     max_new_tokens (vLLM's default), at least 1.
// Errors are typed (result.h): InvalidArgument or ContextTooLong, with the field at fault ("prompt"
// for the prompt itself, "max_tokens"). Thread-safe (the tokenizer is).
#pragma once

#include "engine/request.h"
#include "engine/result.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace brook {

class Tokenizer;

struct PromptLimits {
    int maxModelLen = 0;
    int64_t kvCacheTokens = 0;        // tokens the whole KV cache holds; 0: not limiting
    std::optional<int> maxNewTokens;  // generation_config's default cap, when it has one
};

class PromptBuilder {
public:
    PromptBuilder(const Tokenizer& tokenizer, int vocabSize, PromptLimits limits);

    Result<std::vector<int32_t>> tokens(const decltype(GenerationRequest::prompt)& prompt) const;
    // maxTokens: nullopt checks the prompt alone (it must leave room for one token).
    Result<void> checkContext(int64_t promptTokens, std::optional<int64_t> maxTokens) const;
    // Tokens the context and the KV cache leave after the prompt (may be 0 or negative).
    int64_t room(int64_t promptTokens) const;
    // max_tokens for a request that gives none: room(), capped by maxNewTokens, at least 1.
    int defaultMaxTokens(int64_t promptTokens) const;

    const PromptLimits& limits() const { return m_limits; }

private:
    const Tokenizer& m_tokenizer;
    int m_vocabSize;
    PromptLimits m_limits;
};

}  // namespace brook
