// ChatTemplate: ERNIE-4.5's chat template rendered natively, byte-exact with the Jinja
// template in tokenizer_config.json (see docs: cls once, "User: ..\n", "Assistant: ..<sep>",
// bare system text + "\n", trailing "Assistant: " when adding the generation prompt).
#pragma once

#include "engine/chat_message.h"
#include "engine/tokenizer.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace brook {

class ChatTemplate {
public:
    ChatTemplate(std::string clsToken = "<|begin_of_sentence|>", std::string sepToken = "<|end_of_sentence|>");
    // contentSpans (optional): where each message's content landed in the result, in order.
    std::string render(std::span<const ChatMessage> messages, bool addGenerationPrompt = true,
                       std::vector<TextSpan>* contentSpans = nullptr) const;

private:
    std::string m_cls;
    std::string m_sep;
};

// The one way a chat becomes prompt tokens (engine, server, app): rendered with the model's
// template, the template's own special tokens parsed, message contents tokenized as plain text
// (so "<|end_of_sentence|>" typed by a user is text, not the end of a turn). Thread-safe.
std::vector<int32_t> encodeChat(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                                bool addGenerationPrompt = true, std::string* renderedText = nullptr);

}  // namespace brook
