// ChatSession: one open conversation's logic, with no widgets: send, stop, regenerate and
// edit-and-resend (each adds a branch; nothing is overwritten), branch switching, deletion and
// per-conversation settings. A session opened with conversation id 0 is a draft: nothing of it
// is stored until its first message is sent (so an empty "New chat" never lands in the history),
// and `stored` then gives its new id. It streams through the shared ChatGenerator (so every pane is
// batched by the one engine) and stores each message in HistoryStore: a reply as soon as it
// starts (the conversation's saved leaf points at it), rewritten every second while it grows and
// when it ends or the session closes, so a crash or kill loses at most its last second.
// GUI thread only.
#pragma once

#include "engine/request.h"
#include "gui/chat/conversation_record.h"
#include "gui/chat/generation_outcome.h"
#include "gui/chat/message_tree.h"

#include <QObject>

class QTimer;

namespace brook {

class ChatGenerator;
class HistoryStore;

class ChatSession : public QObject {
    Q_OBJECT
public:
    ChatSession(HistoryStore& store, ChatGenerator& generator, qint64 conversationId, QObject* parent = nullptr);
    ~ChatSession() override;  // stops its generation

    qint64 conversationId() const { return m_conversation.id; }  // 0: a draft, not stored yet
    bool isStored() const { return m_conversation.id != 0; }
    bool isEmpty() const { return m_tree.isEmpty() && !isGenerating(); }
    QString title() const { return m_conversation.title; }  // empty: not named yet
    const ChatSettings& settings() const { return m_conversation.settings; }
    void setSettings(const ChatSettings& settings);
    void rename(const QString& title);

    const MessageTree& tree() const { return m_tree; }
    qint64 currentLeafId() const { return m_conversation.currentLeafId; }
    QList<MessageRecord> visibleMessages() const;  // root -> shown leaf

    bool isGenerating() const { return m_requestId != 0; }
    RequestId requestId() const { return m_requestId; }
    QString streamingText() const { return m_streamingText; }
    int streamingTokens() const { return m_streamingTokens; }  // generated so far (text may lag: special tokens)

    // Each returns false (and emits errorOccurred) when it cannot start.
    bool send(const QString& text);                                 // the preset template wraps the text
    bool regenerate(qint64 messageId);                              // an assistant reply: a new sibling of it
    bool editAndResend(qint64 userMessageId, const QString& text);  // a new sibling user message
    void stop();
    bool deleteMessage(qint64 messageId);            // and its replies
    void switchBranch(qint64 messageId, int delta);  // -1 / +1 among its siblings
    void reload();                                   // re-reads the store
    // How often a growing reply is rewritten in the store (default 1000 ms).
    void setStreamingSaveInterval(int milliseconds);

signals:
    void messagesChanged();
    void streamingTextChanged(const QString& text, int outputTokens);
    void generatingChanged(bool generating);
    void messageCompleted(qint64 messageId);
    void titleChanged(const QString& title);
    void settingsChanged();
    void stored(qint64 conversationId);  // a draft got its row in the history (first message)
    void errorOccurred(const QString& message);

private slots:
    void handleTextArrived(brook::RequestId id, const QString& delta, int outputTokens);
    void handleGenerationFinished(brook::RequestId id, const brook::GenerationOutcome& outcome);

private:
    bool generateReplyTo(qint64 parentId);
    bool ensureStored();  // a draft becomes a stored conversation; false (and errorOccurred) on failure
    void setCurrentLeaf(qint64 leafId);
    qint64 storeMessage(MessageRecord message);
    void saveStreamingReply(const QString& finishReason);  // the stored row of the reply in progress

    HistoryStore& m_store;
    ChatGenerator& m_generator;
    ConversationRecord m_conversation;
    MessageTree m_tree;
    RequestId m_requestId = 0;
    qint64 m_replyParentId = 0;  // the message being answered
    QString m_streamingText;
    int m_streamingTokens = 0;
    qint64 m_streamingMessageId = 0;       // the reply in progress, stored but not yet in m_tree
    bool m_streamingDirty = false;         // text arrived since the last save
    bool m_replyLimitedByContext = false;  // max_tokens was cut to the context's room
    QTimer* m_saveTimer = nullptr;
};

}  // namespace brook
