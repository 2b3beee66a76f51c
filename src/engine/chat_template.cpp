// ChatTemplate: a native rendering of ERNIE-4.5's Jinja chat template (tokenizer_config.json).
// The Jinja trims all whitespace between tags ({%- -%}), so the output is exactly the string
// pieces below; roles other than user/assistant/system fall through its if/elif and vanish.
#include "engine/chat_template.h"

#include <utility>

namespace brook {

ChatTemplate::ChatTemplate(std::string clsToken, std::string sepToken)
    : m_cls(std::move(clsToken)), m_sep(std::move(sepToken)) {}

std::string ChatTemplate::render(std::span<const ChatMessage> messages, bool addGenerationPrompt) const {
    std::string out = m_cls;
    for (const ChatMessage& message : messages) {
        if (message.role == "user") {
            out += "User: ";
            out += message.content;
            out += '\n';
        } else if (message.role == "assistant") {
            out += "Assistant: ";
            out += message.content;
            out += m_sep;
        } else if (message.role == "system") {
            out += message.content;
            out += '\n';
        }
    }
    if (addGenerationPrompt)
        out += "Assistant: ";
    return out;
}

} // namespace brook
