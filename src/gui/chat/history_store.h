// HistoryStore: conversations and their message trees in SQLite through Qt SQL. The database
// runs in WAL mode and every write is committed at once; a reply being generated is stored when
// it starts and updated as it grows (ChatSession), so a crash or a kill loses at most its last
// second. GUI thread only (one connection, named per instance so tests and several stores can
// coexist).
#pragma once

#include "engine/result.h"
#include "gui/chat/conversation_record.h"
#include "gui/chat/message_record.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <optional>

namespace brook {

class HistoryStore {
public:
    HistoryStore();
    ~HistoryStore();
    HistoryStore(const HistoryStore&) = delete;
    HistoryStore& operator=(const HistoryStore&) = delete;

    // Opens (creating when needed) the database file and its schema.
    Result<void> open(const QString& path);
    void close();
    bool isOpen() const;
    QString path() const { return m_path; }
    QString journalMode() const;  // "wal" once open

    qint64 createConversation(const QString& title, const ChatSettings& settings);
    // Newest first. A non-empty filter matches titles and message text (case-insensitive).
    QList<ConversationRecord> conversations(const QString& filter = {}) const;
    std::optional<ConversationRecord> conversation(qint64 id) const;
    bool renameConversation(qint64 id, const QString& title);
    bool updateSettings(qint64 id, const ChatSettings& settings);
    bool setCurrentLeaf(qint64 id, qint64 leafMessageId);
    bool deleteConversation(qint64 id);
    // Removes conversations without a single message (older versions stored every "New chat");
    // returns how many went.
    int deleteEmptyConversations();

    // Stores a complete message and returns its id (0 on failure); touches the conversation.
    qint64 addMessage(const MessageRecord& message);
    // Rewrites a stored message's content, token counts, timings and finish reason.
    bool updateMessage(const MessageRecord& message);
    QList<MessageRecord> messages(qint64 conversationId) const;  // in creation order
    // Deletes the message and everything below it; returns how many rows went.
    int deleteMessageTree(qint64 messageId);

    QString lastError() const { return m_lastError; }

    // All or nothing: the writes between begin and commit land together (an import killed half
    // way leaves no half conversation). Not nested.
    bool beginTransaction();
    bool commitTransaction();
    void rollbackTransaction();

private:
    Result<void> exec(const QString& sql);
    Result<void> addColumnsOfLaterVersions();  // schema upgrades of an existing file
    bool touch(qint64 conversationId);
    void noteError(const QString& what, const QString& error) const;

    QString m_connectionName;
    QString m_path;
    mutable QString m_lastError;
};

}  // namespace brook
