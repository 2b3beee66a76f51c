#include "gui/chat/chat_session.h"

#include "engine/model_config.h"
#include "engine/prompt_builder.h"
#include "gui/chat/chat_generator.h"
#include "gui/chat/history_store.h"

#include <QTimer>

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

namespace brook {

namespace {
constexpr int kTitleLength = 40;
constexpr int kStreamingSaveMs = 1000;  // the most of a reply a crash can lose
}  // namespace

ChatSession::ChatSession(HistoryStore& store, ChatGenerator& generator, qint64 conversationId, QObject* parent)
    : QObject(parent), m_store(store), m_generator(generator)
{
    m_conversation.id = conversationId;
    m_saveTimer = new QTimer(this);
    m_saveTimer->setInterval(kStreamingSaveMs);
    connect(m_saveTimer, &QTimer::timeout, this, [this] {
        if (m_streamingDirty) saveStreamingReply(QString());
    });
    reload();
    connect(&m_generator, &ChatGenerator::textArrived, this, &ChatSession::handleTextArrived);
    connect(&m_generator, &ChatGenerator::generationFinished, this, &ChatSession::handleGenerationFinished);
}

ChatSession::~ChatSession()
{
    if (!m_requestId) return;
    m_generator.stop(m_requestId);
    // The finish event will not reach a destroyed session: keep what streamed so far now.
    if (m_streamingText.isEmpty()) {
        m_store.deleteMessageTree(m_streamingMessageId);
        m_store.setCurrentLeaf(m_conversation.id, m_replyParentId);
    } else {
        saveStreamingReply(QStringLiteral("abort"));
    }
}

void ChatSession::setStreamingSaveInterval(int milliseconds) { m_saveTimer->setInterval(std::max(1, milliseconds)); }

void ChatSession::saveStreamingReply(const QString& finishReason)
{
    if (!m_streamingMessageId) return;
    MessageRecord reply;
    reply.id = m_streamingMessageId;
    reply.content = m_streamingText;
    reply.outputTokens = m_streamingTokens;
    reply.finishReason = finishReason;
    if (!m_store.updateMessage(reply)) spdlog::warn("history: could not save the reply in progress");
    m_streamingDirty = false;
}

void ChatSession::reload()
{
    if (!isStored()) return;  // a draft has nothing in the store yet
    if (auto c = m_store.conversation(m_conversation.id)) m_conversation = *c;
    QList<MessageRecord> messages = m_store.messages(m_conversation.id);
    if (m_streamingMessageId) {
        // The reply in progress is shown from m_streamingText until it ends, not from the tree.
        messages.removeIf([this](const MessageRecord& m) { return m.id == m_streamingMessageId; });
        m_conversation.currentLeafId = m_replyParentId;
    }
    m_tree = MessageTree(messages);
    if (!m_tree.contains(m_conversation.currentLeafId)) m_conversation.currentLeafId = m_tree.newestLeaf();
    emit messagesChanged();
}

void ChatSession::setSettings(const ChatSettings& settings)
{
    if (settings == m_conversation.settings) return;
    m_conversation.settings = settings;
    if (isStored()) m_store.updateSettings(m_conversation.id, settings);
    emit settingsChanged();
}

void ChatSession::rename(const QString& title)
{
    const QString trimmed = title.trimmed();
    if (trimmed == m_conversation.title) return;
    m_conversation.title = trimmed;
    if (isStored()) m_store.renameConversation(m_conversation.id, trimmed);
    emit titleChanged(trimmed);
}

QList<MessageRecord> ChatSession::visibleMessages() const
{
    if (m_tree.isEmpty()) return {};
    return m_tree.pathTo(m_conversation.currentLeafId);
}

void ChatSession::setCurrentLeaf(qint64 leafId)
{
    m_conversation.currentLeafId = leafId;
    if (isStored()) m_store.setCurrentLeaf(m_conversation.id, leafId);
}

bool ChatSession::ensureStored()
{
    if (isStored()) return true;
    const qint64 id = m_store.createConversation(m_conversation.title, m_conversation.settings);
    if (!id) {
        emit errorOccurred(tr("Could not create a conversation: %1").arg(m_store.lastError()));
        return false;
    }
    m_conversation.id = id;
    emit stored(id);
    return true;
}

qint64 ChatSession::storeMessage(MessageRecord message)
{
    message.conversationId = m_conversation.id;
    if (!message.createdAt.isValid()) message.createdAt = QDateTime::currentDateTime();
    message.id = m_store.addMessage(message);
    if (message.id == 0) {
        emit errorOccurred(tr("Could not save the message: %1").arg(m_store.lastError()));
        return 0;
    }
    m_tree.add(message);
    return message.id;
}

bool ChatSession::send(const QString& text)
{
    const QString typed = text.trimmed();
    if (typed.isEmpty()) return false;
    if (isGenerating()) {
        emit errorOccurred(tr("Wait for the answer or stop it before sending."));
        return false;
    }
    if (!m_generator.engine()) {
        emit errorOccurred(tr("Open a model first."));
        return false;
    }
    if (!ensureStored()) return false;
    MessageRecord user;
    user.role = QStringLiteral("user");
    user.content = m_conversation.settings.expandInput(typed);
    user.parentId = m_tree.contains(m_conversation.currentLeafId) ? m_conversation.currentLeafId : 0;
    const qint64 id = storeMessage(user);
    if (!id) return false;
    if (m_conversation.title.isEmpty()) rename(typed.left(kTitleLength).simplified());
    setCurrentLeaf(id);
    emit messagesChanged();
    return generateReplyTo(id);
}

bool ChatSession::regenerate(qint64 messageId)
{
    const MessageRecord* m = m_tree.find(messageId);
    if (!m || isGenerating()) return false;
    // An assistant reply is regenerated as a new answer to the same question; a user message
    // gets one more answer.
    return generateReplyTo(m->isAssistant() ? m->parentId : m->id);
}

bool ChatSession::editAndResend(qint64 userMessageId, const QString& text)
{
    const MessageRecord* old = m_tree.find(userMessageId);
    if (!old || !old->isUser() || text.trimmed().isEmpty() || isGenerating()) return false;
    if (!m_generator.engine()) {
        emit errorOccurred(tr("Open a model first."));
        return false;
    }
    MessageRecord edited;
    edited.role = QStringLiteral("user");
    edited.content = text.trimmed();
    edited.parentId = old->parentId;  // a sibling: the old question and its answers stay
    const qint64 id = storeMessage(edited);
    if (!id) return false;
    setCurrentLeaf(id);
    emit messagesChanged();
    return generateReplyTo(id);
}

bool ChatSession::generateReplyTo(qint64 parentId)
{
    Engine* engine = m_generator.engine();
    if (!engine) {
        emit errorOccurred(tr("Open a model first."));
        return false;
    }
    std::vector<ChatMessage> messages;
    const QString system = m_conversation.settings.systemPrompt.trimmed();
    if (!system.isEmpty()) messages.push_back({"system", system.toStdString()});
    for (const MessageRecord& m : m_tree.pathTo(parentId))
        messages.push_back({m.role.toStdString(), m.content.toStdString()});

    const EngineConfig& config = engine->config();
    const PromptBuilder prompts(engine->tokenizer(), engine->modelConfig().vocabSize, {config.maxModelLen, 0, {}});
    auto built = prompts.tokens(messages);
    if (!built) {
        emit errorOccurred(tr("The engine refused the request: %1").arg(QString::fromStdString(built.error())));
        return false;
    }
    std::vector<int32_t> prompt = std::move(built).value();
    const int64_t room = prompts.room(int64_t(prompt.size()));
    if (room < 1) {
        emit errorOccurred(tr("This conversation (%1 tokens) no longer fits the model's context of %2 tokens. "
                              "Start a new chat or delete earlier messages.")
                               .arg(prompt.size())
                               .arg(engine->config().maxModelLen));
        return false;
    }
    GenerationRequest request;
    request.params = m_conversation.settings.toSamplingParams();
    // A reply allowed more than the context has room for ends where the context does: its
    // "length" finish then means a full context, not the max-tokens setting.
    m_replyLimitedByContext = request.params.maxTokens > room;
    request.params.maxTokens = int(std::clamp<int64_t>(request.params.maxTokens, 1, room));
    request.prompt = std::move(prompt);
    request.source = "chat";
    auto id = m_generator.start(std::move(request));
    if (!id) {
        emit errorOccurred(tr("The engine refused the request: %1").arg(QString::fromStdString(id.error())));
        return false;
    }
    m_requestId = *id;
    m_replyParentId = parentId;
    m_streamingText.clear();
    m_streamingTokens = 0;
    setCurrentLeaf(parentId);
    // Stored now, empty, and made the saved leaf: after a crash the conversation reopens on it.
    MessageRecord reply;
    reply.conversationId = m_conversation.id;
    reply.role = QStringLiteral("assistant");
    reply.parentId = parentId;
    reply.createdAt = QDateTime::currentDateTime();
    m_streamingMessageId = m_store.addMessage(reply);
    if (m_streamingMessageId) m_store.setCurrentLeaf(m_conversation.id, m_streamingMessageId);
    m_streamingDirty = false;
    m_saveTimer->start();
    emit messagesChanged();
    emit generatingChanged(true);
    emit streamingTextChanged(m_streamingText, 0);
    return true;
}

void ChatSession::stop()
{
    if (m_requestId) m_generator.stop(m_requestId);
}

void ChatSession::handleTextArrived(RequestId id, const QString& delta, int outputTokens)
{
    if (id != m_requestId) return;
    m_streamingText += delta;
    m_streamingTokens = outputTokens;
    m_streamingDirty = true;
    emit streamingTextChanged(m_streamingText, outputTokens);
}

void ChatSession::handleGenerationFinished(RequestId id, const GenerationOutcome& outcome)
{
    if (id != m_requestId) return;
    m_requestId = 0;
    m_streamingText.clear();
    m_saveTimer->stop();
    const qint64 rowId = std::exchange(m_streamingMessageId, 0);
    qint64 stored = 0;
    // A reply stopped before its first token leaves nothing worth keeping.
    if (!outcome.text.isEmpty() || outcome.finishReason != QLatin1String("abort")) {
        MessageRecord reply;
        reply.conversationId = m_conversation.id;
        reply.role = QStringLiteral("assistant");
        reply.content = outcome.text;
        reply.parentId = m_replyParentId;
        reply.createdAt = QDateTime::currentDateTime();
        reply.promptTokens = outcome.promptTokens;
        reply.outputTokens = outcome.outputTokens;
        reply.ttftSeconds = outcome.ttftSeconds;
        reply.cachedTokens = outcome.cachedTokens;
        reply.tokensPerSecond = outcome.tokensPerSecond;
        reply.finishReason = outcome.finishReason;
        if (outcome.finishReason == QLatin1String("length") && m_replyLimitedByContext)
            reply.finishReason = QStringLiteral("context");
        reply.id = rowId;
        if (rowId && m_store.updateMessage(reply)) {
            m_tree.add(reply);
            stored = rowId;
        } else {
            stored = storeMessage(reply);  // the row made at the start is missing: store it anew
        }
        if (stored) setCurrentLeaf(stored);
    } else {
        if (rowId) m_store.deleteMessageTree(rowId);
        setCurrentLeaf(m_replyParentId);
    }
    emit generatingChanged(false);
    emit messagesChanged();
    if (stored) emit messageCompleted(stored);
}

bool ChatSession::deleteMessage(qint64 messageId)
{
    const MessageRecord* m = m_tree.find(messageId);
    if (!m || isGenerating()) return false;
    const qint64 parentId = m->parentId;
    const bool onPath = [&] {
        for (const MessageRecord& v : visibleMessages())
            if (v.id == messageId) return true;
        return false;
    }();
    if (m_store.deleteMessageTree(messageId) == 0) {
        emit errorOccurred(tr("Could not delete the message: %1").arg(m_store.lastError()));
        return false;
    }
    m_tree.removeSubtree(messageId);
    if (onPath) {
        // Show a remaining sibling branch if there is one, else stop at the parent.
        const QList<qint64> siblings = m_tree.children(parentId);
        const qint64 leaf = !siblings.isEmpty() ? m_tree.newestLeafUnder(siblings.last()) : parentId;
        setCurrentLeaf(leaf);
    }
    emit messagesChanged();
    return true;
}

void ChatSession::switchBranch(qint64 messageId, int delta)
{
    if (isGenerating()) return;
    const QList<qint64> siblings = m_tree.siblings(messageId);
    const int index = int(siblings.indexOf(messageId));
    if (index < 0) return;
    const int target = std::clamp(index + delta, 0, int(siblings.size()) - 1);
    if (target == index) return;
    setCurrentLeaf(m_tree.newestLeafUnder(siblings[target]));
    emit messagesChanged();
}

}  // namespace brook
