// MessageRecord: one stored chat message. Messages form a tree per conversation (parentId):
// regenerating or editing adds a sibling instead of overwriting, so every branch is kept.
// Plain data; HistoryStore reads and writes it.
#pragma once

#include <QDateTime>
#include <QString>

namespace brook {

struct MessageRecord {
    qint64 id = 0;  // 0 until stored
    qint64 conversationId = 0;
    qint64 parentId = 0;  // 0: a root message
    QString role;         // "system", "user" or "assistant"
    QString content;
    QDateTime createdAt;
    // Assistant messages: what the engine reported.
    int promptTokens = 0;
    int outputTokens = 0;
    int cachedTokens = 0;        // prompt tokens found in the prefix cache (not computed again)
    double ttftSeconds = 0;      // time to first token
    double tokensPerSecond = 0;  // decode speed after the first token
    QString finishReason;        // "stop", "length", "context" (the context filled up), "abort" or empty

    bool isUser() const { return role == QLatin1String("user"); }
    bool isAssistant() const { return role == QLatin1String("assistant"); }
};

}  // namespace brook
