// ChatTemplate: ERNIE-4.5's chat template rendered natively, byte-exact with the Jinja
// template in tokenizer_config.json (see docs: cls once, "User: ..\n", "Assistant: ..<sep>",
// bare system text + "\n", trailing "Assistant: " when adding the generation prompt).
#pragma once

#include "engine/chat_message.h"

#include <span>
#include <string>

namespace brook {

class ChatTemplate {
public:
    ChatTemplate(std::string clsToken = "<|begin_of_sentence|>",
                 std::string sepToken = "<|end_of_sentence|>");
    std::string render(std::span<const ChatMessage> messages, bool addGenerationPrompt = true) const;

private:
    std::string m_cls;
    std::string m_sep;
};

} // namespace brook
