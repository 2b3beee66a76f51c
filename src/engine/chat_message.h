#pragma once

#include <string>

namespace brook {

// One turn of a conversation, as OpenAI's `messages` entries: role is system, user or assistant.
struct ChatMessage {
    std::string role;
    std::string content;
};

}  // namespace brook
