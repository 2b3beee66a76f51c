#include "engine/prompt_builder.h"

#include "engine/chat_template.h"
#include "engine/tokenizer.h"

#include <algorithm>
#include <climits>
#include <string>

namespace brook {

PromptBuilder::PromptBuilder(const Tokenizer& tokenizer, int vocabSize, PromptLimits limits)
    : m_tokenizer(tokenizer), m_vocabSize(vocabSize), m_limits(limits)
{}

Result<std::vector<int32_t>> PromptBuilder::tokens(const decltype(GenerationRequest::prompt)& prompt) const
{
    std::vector<int32_t> ids;
    if (const auto* text = std::get_if<std::string>(&prompt)) {
        ids = m_tokenizer.encode(*text, true);
    } else if (const auto* messages = std::get_if<std::vector<ChatMessage>>(&prompt)) {
        ids = encodeChat(m_tokenizer, *messages);
    } else {
        ids = std::get<std::vector<int32_t>>(prompt);
        for (int32_t id : ids)
            if (id < 0 || id >= m_vocabSize)
                return makeError(ErrorCode::InvalidArgument, "prompt",
                                 "prompt token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                                     std::to_string(m_vocabSize) + ")");
    }
    if (ids.empty()) return makeError(ErrorCode::InvalidArgument, "prompt", "the prompt is empty");
    return ids;
}

Result<void> PromptBuilder::checkContext(int64_t promptTokens, std::optional<int64_t> maxTokens) const
{
    const int maxModelLen = m_limits.maxModelLen;
    if (promptTokens >= maxModelLen)
        return makeError(ErrorCode::ContextTooLong, "prompt",
                         "This model's maximum context length is " + std::to_string(maxModelLen) +
                             " tokens. However, your request has " + std::to_string(promptTokens) +
                             " input tokens. Please reduce the length of the input messages.");
    // Compared without adding: max_tokens may be anything up to INT64_MAX (found by fuzz_openai_request).
    if (maxTokens && *maxTokens > maxModelLen - promptTokens)
        return makeError(
            ErrorCode::ContextTooLong, "max_tokens",
            "This model's maximum context length is " + std::to_string(maxModelLen) +
                " tokens. However, you requested " +
                (*maxTokens > INT64_MAX - promptTokens ? std::string("more than ") + std::to_string(INT64_MAX)
                                                       : std::to_string(promptTokens + *maxTokens)) +
                " tokens (" + std::to_string(promptTokens) + " in the messages, " + std::to_string(*maxTokens) +
                " in the completion). Please reduce the length of the messages or completion.");
    const int64_t cacheTokens = m_limits.kvCacheTokens;
    const int64_t requested = promptTokens + (maxTokens ? *maxTokens : 1);
    if (cacheTokens > 0 && requested > cacheTokens)
        return makeError(ErrorCode::ContextTooLong, maxTokens ? "max_tokens" : "prompt",
                         "the request needs " + std::to_string(requested) +
                             " tokens of KV cache but the whole cache holds " + std::to_string(cacheTokens) +
                             "; reduce max_tokens or give the KV cache more memory");
    return {};
}

int64_t PromptBuilder::room(int64_t promptTokens) const
{
    int64_t limit = m_limits.maxModelLen;
    if (m_limits.kvCacheTokens > 0) limit = std::min(limit, m_limits.kvCacheTokens);
    return limit - promptTokens;
}

int PromptBuilder::defaultMaxTokens(int64_t promptTokens) const
{
    int64_t tokens = room(promptTokens);
    if (m_limits.maxNewTokens) tokens = std::min<int64_t>(tokens, *m_limits.maxNewTokens);
    return int(std::clamp<int64_t>(tokens, 1, INT_MAX));
}

}  // namespace brook
