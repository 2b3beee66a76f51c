// Export and import: random conversations survive OpenAI-JSON export and import (messages,
// system prompt, sampling), Markdown shows every turn in order, bad files are rejected with a
// message naming the fault, and an import is stored as one chained branch.
#include "gui/chat/conversation_exporter.h"
#include "gui/chat/history_store.h"
#include "gui/chat/message_tree.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <random>

using namespace brook;

namespace {

QString randomText(std::mt19937& rng)
{
    static const QStringList words = {QStringLiteral("hello"),      QStringLiteral("你好"),
                                      QStringLiteral("\"quoted\""), QStringLiteral("new\nline"),
                                      QStringLiteral("```code```"), QStringLiteral("# head"),
                                      QStringLiteral("emoji 🌊"),    QStringLiteral("tab\t")};
    QString s;
    const int n = std::uniform_int_distribution<int>(1, 8)(rng);
    for (int i = 0; i < n; ++i)
        s += words[std::uniform_int_distribution<int>(0, int(words.size()) - 1)(rng)] + QLatin1Char(' ');
    return s;
}

}  // namespace

class TestConversationExporter : public QObject {
    Q_OBJECT
private slots:
    void jsonRoundTripsRandomConversations()
    {
        std::mt19937 rng(5);
        for (int round = 0; round < 25; ++round) {
            ConversationRecord c;
            c.title = randomText(rng).trimmed();
            c.settings.systemPrompt = round % 3 ? randomText(rng) : QString();
            c.settings.temperature = std::uniform_real_distribution<double>(0, 2)(rng);
            c.settings.topP = std::uniform_real_distribution<double>(0.1, 1)(rng);
            c.settings.topK = round % 2 ? 0 : round * 3 + 1;
            c.settings.maxTokens = 10 + round * 17;
            c.settings.repetitionPenalty = round % 4 ? 1.0 : 1.15;
            c.settings.presencePenalty = 0.1 * (round % 5);
            c.settings.seed = round % 2 ? -1 : round * 1000;
            QList<MessageRecord> messages;
            for (int i = 0; i < 1 + round % 7; ++i) {
                MessageRecord m;
                m.role = i % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
                m.content = randomText(rng);
                messages.append(m);
            }
            auto back = ConversationExporter::fromOpenAiJson(
                ConversationExporter::toOpenAiJson(c, messages, QStringLiteral("m")));
            QVERIFY2(back.ok(), back.ok() ? "" : back.error().c_str());
            QCOMPARE(back->title, c.title);
            QCOMPARE(back->settings.systemPrompt, c.settings.systemPrompt);
            QCOMPARE(back->settings.temperature, c.settings.temperature);
            QCOMPARE(back->settings.topP, c.settings.topP);
            QCOMPARE(back->settings.topK, c.settings.topK);
            QCOMPARE(back->settings.maxTokens, c.settings.maxTokens);
            QCOMPARE(back->settings.repetitionPenalty, c.settings.repetitionPenalty);
            QCOMPARE(back->settings.presencePenalty, c.settings.presencePenalty);
            QCOMPARE(back->settings.seed, c.settings.seed);
            QCOMPARE(back->messages.size(), messages.size());
            for (int i = 0; i < messages.size(); ++i) {
                QCOMPARE(back->messages[i].role, messages[i].role);
                QCOMPARE(back->messages[i].content, messages[i].content);
            }
        }
    }

    void exportIsAnOpenAiRequestBody()
    {
        ConversationRecord c;
        c.settings.systemPrompt = QStringLiteral("Be brief.");
        MessageRecord u;
        u.role = QStringLiteral("user");
        u.content = QStringLiteral("Hi");
        const QJsonObject body =
            QJsonDocument::fromJson(ConversationExporter::toOpenAiJson(c, {u}, QStringLiteral("ernie"))).object();
        QCOMPARE(body.value("model").toString(), QStringLiteral("ernie"));
        const QJsonArray messages = body.value("messages").toArray();
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[0].toObject().value("role").toString(), QStringLiteral("system"));
        QCOMPARE(messages[1].toObject().value("content").toString(), QStringLiteral("Hi"));
        QVERIFY(body.value("temperature").isDouble());
    }

    void markdownShowsEveryTurnInOrder()
    {
        ConversationRecord c;
        c.title = QStringLiteral("Trip");
        c.settings.systemPrompt = QStringLiteral("You plan trips.");
        QList<MessageRecord> messages;
        for (int i = 0; i < 4; ++i) {
            MessageRecord m;
            m.role = i % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
            m.content = QStringLiteral("turn %1 text").arg(i);
            m.outputTokens = i % 2 ? 12 : 0;
            m.tokensPerSecond = 33.3;
            messages.append(m);
        }
        const QString md = ConversationExporter::toMarkdown(c, messages);
        QVERIFY(md.startsWith(QStringLiteral("# Trip\n")));
        QVERIFY(md.contains(QStringLiteral("You plan trips.")));
        int last = -1;
        for (int i = 0; i < 4; ++i) {
            const int at = int(md.indexOf(QStringLiteral("turn %1 text").arg(i)));
            QVERIFY(at > last);
            last = at;
        }
        QCOMPARE(md.count(QStringLiteral("## User")), 2);
        QCOMPARE(md.count(QStringLiteral("## Assistant")), 2);
        QVERIFY(md.contains(QStringLiteral("12 tokens")));
    }

    void badFilesAreRejectedWithTheFault()
    {
        auto error = [](const QByteArray& json) {
            auto r = ConversationExporter::fromOpenAiJson(json);
            return r.ok() ? QString() : QString::fromStdString(r.error());
        };
        QVERIFY(error("{not json").contains(QStringLiteral("not JSON")));
        QVERIFY(error("{\"title\": \"x\"}").contains(QStringLiteral("messages")));
        QVERIFY(error("[{\"role\": \"bot\", \"content\": \"x\"}]").contains(QStringLiteral("messages[0].role")));
        QVERIFY(error("[{\"role\": \"user\", \"content\": 5}]").contains(QStringLiteral("messages[0].content")));
        QVERIFY(error("[{\"role\": \"system\", \"content\": \"only a system prompt\"}]")
                    .contains(QStringLiteral("no user")));
        // A bare array of messages and OpenAI content parts are accepted.
        auto ok = ConversationExporter::fromOpenAiJson(
            "[{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"part one\"}]}]");
        QVERIFY(ok.ok());
        QCOMPARE(ok->messages[0].content, QStringLiteral("part one"));
        QCOMPARE(ok->title, QStringLiteral("part one"));
    }

    void importIsStoredAsOneBranch()
    {
        QTemporaryDir dir;
        HistoryStore store;
        QVERIFY(store.open(dir.filePath("h.sqlite")).ok());
        auto imported = ConversationExporter::fromOpenAiJson(
            "{\"title\": \"Imported\", \"messages\": [{\"role\": \"system\", \"content\": \"S\"},"
            "{\"role\": \"user\", \"content\": \"Q1\"}, {\"role\": \"assistant\", \"content\": \"A1\"},"
            "{\"role\": \"user\", \"content\": \"Q2\"}]}");
        QVERIFY(imported.ok());
        const qint64 id = ConversationExporter::store(store, *imported);
        QVERIFY(id > 0);
        const auto c = store.conversation(id);
        QCOMPARE(c->title, QStringLiteral("Imported"));
        QCOMPARE(c->settings.systemPrompt, QStringLiteral("S"));
        const MessageTree tree(store.messages(id));
        const QList<MessageRecord> path = tree.pathTo(c->currentLeafId);
        QCOMPARE(path.size(), 3);
        QCOMPARE(path[0].content, QStringLiteral("Q1"));
        QCOMPARE(path[1].content, QStringLiteral("A1"));
        QCOMPARE(path[2].content, QStringLiteral("Q2"));
    }
};

QTEST_GUILESS_MAIN(TestConversationExporter)
#include "test_conversation_exporter.moc"
