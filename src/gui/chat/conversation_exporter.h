// ConversationExporter: a conversation's shown branch as Markdown (for reading) or as the body
// of an OpenAI chat-completion request (`messages` plus the sampling fields, so the file can be
// replayed against any OpenAI-compatible server), and back: import reads that JSON (or a bare
// `messages` array) into a new conversation. Stateless.
#pragma once

#include "engine/result.h"
#include "gui/chat/conversation_record.h"
#include "gui/chat/message_record.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QList>

namespace brook {

class HistoryStore;

struct ImportedConversation {
    QString title;
    ChatSettings settings;          // the system message goes to settings.systemPrompt
    QList<MessageRecord> messages;  // user / assistant, in order (ids and parents unset)
};

class ConversationExporter {
    Q_DECLARE_TR_FUNCTIONS(ConversationExporter)
public:
    static QString toMarkdown(const ConversationRecord& conversation, const QList<MessageRecord>& messages);
    static QByteArray toOpenAiJson(const ConversationRecord& conversation, const QList<MessageRecord>& messages,
                                   const QString& modelName = {});
    // Errors name what is wrong ("messages[2].role: 'bot' is not system, user or assistant").
    static Result<ImportedConversation> fromOpenAiJson(const QByteArray& json);
    // Stores an import as a new conversation (messages chained in order); returns its id, 0 on failure.
    static qint64 store(HistoryStore& store, const ImportedConversation& conversation);
};

}  // namespace brook
