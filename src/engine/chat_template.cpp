// ChatTemplate: a native rendering of ERNIE-4.5's Jinja chat template (tokenizer_config.json).
// The Jinja trims all whitespace between tags ({%- -%}), so the output is exactly the string
// pieces below; roles other than user/assistant/system fall through its if/elif and vanish.
#include "engine/chat_template.h"

#include <utility>

namespace brook {

ChatTemplate::ChatTemplate(std::string clsToken, std::string sepToken)
    : m_cls(std::move(clsToken)), m_sep(std::move(sepToken))
{}

std::string ChatTemplate::render(std::span<const ChatMessage> messages, bool addGenerationPrompt,
                                 std::vector<TextSpan>* contentSpans) const
{
    std::string out = m_cls;
    auto appendContent = [&](const std::string& content) {
        if (contentSpans && !content.empty()) contentSpans->push_back({out.size(), out.size() + content.size()});
        out += content;
    };
    for (const ChatMessage& message : messages) {
        if (message.role == "user") {
            out += "User: ";
            appendContent(message.content);
            out += '\n';
        } else if (message.role == "assistant") {
            out += "Assistant: ";
            appendContent(message.content);
            out += m_sep;
        } else if (message.role == "system") {
            appendContent(message.content);
            out += '\n';
        }
    }
    if (addGenerationPrompt) out += "Assistant: ";
    return out;
}

std::vector<int32_t> encodeChat(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                                bool addGenerationPrompt, std::string* renderedText)
{
    const ChatTemplate chatTemplate(tokenizer.clsToken(), tokenizer.sepToken());
    std::vector<TextSpan> contents;
    const std::string text = chatTemplate.render(messages, addGenerationPrompt, &contents);
    std::vector<int32_t> ids = tokenizer.encode(text, contents);
    if (renderedText) *renderedText = text;
    return ids;
}

}  // namespace brook
