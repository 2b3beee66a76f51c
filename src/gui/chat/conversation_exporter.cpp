#include "gui/chat/conversation_exporter.h"

#include "gui/chat/history_store.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

namespace brook {

QString ConversationExporter::toMarkdown(const ConversationRecord& c, const QList<MessageRecord>& messages)
{
    QString out = QStringLiteral("# %1\n\n").arg(c.title.isEmpty() ? tr("Conversation") : c.title);
    if (!c.settings.systemPrompt.trimmed().isEmpty())
        out += QStringLiteral("> **%1:** %2\n\n").arg(tr("System"), c.settings.systemPrompt.trimmed());
    for (const MessageRecord& m : messages) {
        const QString who = m.isUser() ? tr("User") : m.isAssistant() ? tr("Assistant") : tr("System");
        out += QStringLiteral("## %1\n\n%2\n\n").arg(who, m.content.trimmed());
        if (m.isAssistant() && m.outputTokens > 0)
            out += QStringLiteral("*%1*\n\n")
                       .arg(tr("%1 tokens · first token %2 s · %3 tokens/s")
                                .arg(m.outputTokens)
                                .arg(m.ttftSeconds, 0, 'f', 2)
                                .arg(m.tokensPerSecond, 0, 'f', 1));
    }
    return out;
}

QByteArray ConversationExporter::toOpenAiJson(const ConversationRecord& c, const QList<MessageRecord>& messages,
                                              const QString& modelName)
{
    QJsonArray list;
    if (!c.settings.systemPrompt.trimmed().isEmpty())
        list.append(QJsonObject{{"role", "system"}, {"content", c.settings.systemPrompt}});
    for (const MessageRecord& m : messages) list.append(QJsonObject{{"role", m.role}, {"content", m.content}});

    const ChatSettings& s = c.settings;
    QJsonObject body{{"messages", list},
                     {"temperature", s.temperature},
                     {"top_p", s.topP},
                     {"max_tokens", s.maxTokens},
                     {"presence_penalty", s.presencePenalty},
                     {"frequency_penalty", s.frequencyPenalty}};
    if (!modelName.isEmpty()) body["model"] = modelName;
    if (s.topK > 0) body["top_k"] = s.topK;  // vLLM's extension fields
    if (s.repetitionPenalty != 1.0) body["repetition_penalty"] = s.repetitionPenalty;
    if (s.seed >= 0) body["seed"] = s.seed;
    if (!c.title.isEmpty()) body["title"] = c.title;
    return QJsonDocument(body).toJson(QJsonDocument::Indented);
}

Result<ImportedConversation> ConversationExporter::fromOpenAiJson(const QByteArray& json)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (doc.isNull())
        return makeError("not JSON: " + error.errorString().toStdString() + " at offset " +
                         std::to_string(error.offset));
    QJsonArray list;
    QJsonObject body;
    if (doc.isArray()) {
        list = doc.array();
    } else {
        body = doc.object();
        if (!body.value("messages").isArray()) return makeError("no 'messages' array");
        list = body.value("messages").toArray();
    }

    ImportedConversation out;
    // The sampling fields of a request body, when present, override the defaults.
    QJsonObject settings = out.settings.toJson();
    for (const char* key : {"temperature", "top_p", "top_k", "max_tokens", "repetition_penalty", "presence_penalty",
                            "frequency_penalty", "seed"})
        if (body.value(key).isDouble()) settings[key] = body.value(key);
    out.settings = ChatSettings::fromJson(settings);
    out.title = body.value("title").toString();

    for (qsizetype i = 0; i < list.size(); ++i) {
        const std::string where = "messages[" + std::to_string(i) + "]";
        if (!list[i].isObject()) return makeError(where + ": not an object");
        const QJsonObject m = list[i].toObject();
        const QString role = m.value("role").toString();
        QString content;
        if (m.value("content").isString()) {
            content = m.value("content").toString();
        } else if (m.value("content").isArray()) {
            // OpenAI content parts: keep the text ones.
            for (const QJsonValue& part : m.value("content").toArray())
                if (part.toObject().value("type").toString() == QLatin1String("text"))
                    content += part.toObject().value("text").toString();
        } else {
            return makeError(where + ".content: not a string");
        }
        if (role == QLatin1String("system")) {
            if (!out.settings.systemPrompt.isEmpty()) out.settings.systemPrompt += QLatin1Char('\n');
            out.settings.systemPrompt += content;
            continue;
        }
        if (role != QLatin1String("user") && role != QLatin1String("assistant"))
            return makeError(where + ".role: '" + role.toStdString() + "' is not system, user or assistant");
        MessageRecord r;
        r.role = role;
        r.content = content;
        out.messages.append(r);
    }
    if (out.messages.isEmpty()) return makeError("'messages' holds no user or assistant message");
    if (out.title.isEmpty()) out.title = out.messages.first().content.left(40).simplified();
    return out;
}

qint64 ConversationExporter::store(HistoryStore& store, const ImportedConversation& c)
{
    // One transaction: a kill or a failed row half way through leaves nothing behind, and one
    // commit instead of one per row makes large imports fast.
    if (!store.beginTransaction()) return 0;
    const qint64 id = store.createConversation(c.title, c.settings);
    qint64 parent = 0;
    bool ok = id != 0;
    for (qsizetype i = 0; ok && i < c.messages.size(); ++i) {
        MessageRecord m = c.messages[i];
        m.conversationId = id;
        m.parentId = parent;
        parent = store.addMessage(m);
        ok = parent != 0;
    }
    if (ok && !c.messages.isEmpty()) ok = store.setCurrentLeaf(id, parent);
    if (!ok || !store.commitTransaction()) {
        store.rollbackTransaction();
        return 0;
    }
    return id;
}

}  // namespace brook
