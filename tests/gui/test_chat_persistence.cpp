// No chat is lost: a reply is in the history while it streams. The test runs itself as a child
// process that streams a long reply and is killed with SIGKILL half way; the history then holds
// the partial reply as the conversation's current leaf. Closing a session mid-stream keeps the
// partial reply too, and an import that fails half way leaves nothing behind (one transaction).
#include "gui_test_support.h"

#include "gui/chat/chat_generator.h"
#include "gui/chat/chat_session.h"
#include "gui/chat/conversation_exporter.h"
#include "gui/chat/history_store.h"

#include <QCoreApplication>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <cstdio>
#include <memory>

using namespace brook;
using namespace brook::guitest;

namespace {

constexpr int kChildSaveIntervalMs = 100;

// The child: streams a reply that cannot end on its own, and once it has streamed for a while
// prints "READY <hex of the text it had 3 save intervals ago>", then streams on until killed.
int runStreamingChild(const QString& databasePath)
{
    HistoryStore store;
    if (!store.open(databasePath).ok()) return 3;
    // A reply no machine finishes before READY: in a fresh Debian root the tiny model streamed
    // 4,000 tokens before the save had reached the disk, three times over (exit 6).
    LaunchOptions options = chatOptions();
    options.modelDir = testsupport::longContextTinyModelDir();
    options.maxModelLen = 65536;
    auto engine = testsupport::launch(options);
    ChatGenerator generator;
    generator.setEngine(engine.get());
    generator.setRequestHook([](GenerationRequest& r) {
        r.params.ignoreEos = true;
        r.params.maxTokens = 60000;  // nearly the whole context
    });
    ChatSettings settings;
    settings.temperature = 0.0;
    HistoryStore reader;  // reads what the periodic save put on disk, as another connection
    if (!reader.open(databasePath).ok()) return 8;
    // A reply that ends before READY would prove nothing, and on a starved machine the engine can
    // race through all 4,000 tokens before this thread looks: then a new conversation (the old one
    // deleted, so the parent finds one), up to 3 times.
    for (int attempt = 0; attempt < 3; ++attempt) {
        const qint64 id = store.createConversation(QStringLiteral("crash"), settings);
        auto session = std::make_unique<ChatSession>(store, generator, id);
        session->setStreamingSaveInterval(kChildSaveIntervalMs);
        if (!session->send(QStringLiteral("Tell me a long story."))) return 4;
        if (!waitFor([&] { return !session->streamingText().isEmpty() || !session->isGenerating(); })) return 5;
        QTest::qWait(2 * kChildSaveIntervalMs);
        const QString earlier = session->streamingText();
        // Until the periodic save has put it on disk (on a loaded machine that takes longer than a
        // few intervals; how soon is not what this test is about).
        const bool saved = !earlier.isEmpty() && waitFor(
                                                     [&] {
                                                         const QList<MessageRecord> stored = reader.messages(id);
                                                         return stored.size() == 2 &&
                                                                stored[1].content.startsWith(earlier);
                                                     },
                                                     30000);
        if (saved && session->isGenerating()) {
            std::printf("READY %s\n", earlier.toUtf8().toHex().constData());
            std::fflush(stdout);
            QTest::qWait(60000);
            return 7;
        }
        if (earlier.isEmpty() || !session->isGenerating()) {  // finished already: the kill would prove nothing
            session.reset();
            store.deleteConversation(id);
            continue;
        }
        return 9;  // streaming, but the save never reached the disk
    }
    return 6;
}

}  // namespace

class TestChatPersistence : public QObject {
    Q_OBJECT
private slots:
    void killedMidStreamKeepsThePartialReply()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("history.sqlite"));
        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--streaming-child"), db});
        QVERIFY(child.waitForStarted());
        QByteArray line;  // the child's log lines go to stdout too: wait for the READY line
        QVERIFY2(waitFor(
                     [&] {
                         while (child.canReadLine() && !line.startsWith("READY ")) line = child.readLine().trimmed();
                         return line.startsWith("READY ") || child.state() == QProcess::NotRunning;
                     },
                     180000),  // up to 3 attempts (see the child)
                 "the child never reported");
        QVERIFY2(line.startsWith("READY "),
                 qPrintable(QStringLiteral("child exit %1: %2").arg(child.exitCode()).arg(QString::fromUtf8(line))));
        const QString earlier = QString::fromUtf8(QByteArray::fromHex(line.mid(6)));
        child.kill();  // SIGKILL: no destructor, no close event
        QVERIFY(child.waitForFinished());

        HistoryStore store;
        QVERIFY(store.open(db).ok());
        const auto conversations = store.conversations();
        QCOMPARE(conversations.size(), 1);
        const QList<MessageRecord> messages = store.messages(conversations[0].id);
        QCOMPARE(messages.size(), 2);
        const MessageRecord& reply = messages[1];
        QCOMPARE(reply.role, QStringLiteral("assistant"));
        QCOMPARE(reply.parentId, messages[0].id);
        // Everything streamed more than a save interval before the kill is there.
        QVERIFY2(
            reply.content.startsWith(earlier) && !earlier.isEmpty(),
            qPrintable(
                QStringLiteral("stored %1 chars, %2 streamed earlier").arg(reply.content.size()).arg(earlier.size())));
        QVERIFY(reply.finishReason.isEmpty());               // interrupted: it never finished
        QCOMPARE(conversations[0].currentLeafId, reply.id);  // reopens on the partial reply
    }

    void closingMidStreamKeepsThePartialReply()
    {
        QTemporaryDir dir;
        HistoryStore store;
        QVERIFY(store.open(dir.filePath(QStringLiteral("h.sqlite"))).ok());
        auto engine = testsupport::launch(chatOptions());
        ChatGenerator generator;
        generator.setEngine(engine.get());
        generator.setRequestHook([](GenerationRequest& r) {
            r.params.ignoreEos = true;
            r.params.maxTokens = 4000;
        });
        // Greedy, so every run sees the same reply: sampled at random, the random-weight model
        // sometimes settles on special tokens, which print nothing, and 4,000 of them stream 3 chars.
        ChatSettings settings;
        settings.temperature = 0.0;
        const qint64 id = store.createConversation(QStringLiteral("close"), settings);
        QString streamed;
        bool wasGenerating = false;
        auto session = std::make_unique<ChatSession>(store, generator, id);
        // The pane closes as soon as some text has streamed, from the generator's own delivery:
        // a poll could miss the moment on a loaded machine, where one flush can bring the first
        // text and the end of the whole reply together.
        connect(&generator, &ChatGenerator::textArrived, this, [&] {
            if (!session || session->streamingText().size() <= 8) return;
            wasGenerating = session->isGenerating();
            streamed = session->streamingText();
            session.reset();  // the pane closes while the reply streams
        });
        // A reply that ends first means the close never happened mid-stream: say what it was.
        std::optional<GenerationOutcome> finishedFirst;
        connect(&generator, &ChatGenerator::generationFinished, this, [&](RequestId, const GenerationOutcome& o) {
            if (session) finishedFirst = o;
        });
        QVERIFY(session->send(QStringLiteral("Hello")));
        QVERIFY2(waitFor([&] { return !session || finishedFirst; }) && !finishedFirst,
                 finishedFirst ? qPrintable(QStringLiteral("the reply ended before the close: %1 tokens, %2 chars")
                                                .arg(finishedFirst->outputTokens)
                                                .arg(finishedFirst->text.size()))
                               : "nothing streamed");
        QVERIFY(wasGenerating);
        QVERIFY(streamed.size() > 8);
        const QList<MessageRecord> messages = store.messages(id);
        QCOMPARE(messages.size(), 2);
        QVERIFY(messages[1].content.startsWith(streamed));
        QCOMPARE(messages[1].finishReason, QStringLiteral("abort"));
        QCOMPARE(store.conversation(id)->currentLeafId, messages[1].id);
        // Reopened, the conversation shows it as an ordinary message.
        ChatSession reopened(store, generator, id);
        QCOMPARE(reopened.visibleMessages().size(), 2);
        QVERIFY(waitFor([&] { return engine->stats().numRunning == 0 && engine->stats().numWaiting == 0; }));
    }

    void aFailedImportLeavesNothing()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("h.sqlite"));
        HistoryStore store;
        QVERIFY(store.open(path).ok());
        {
            // The database refuses the 101st message, as a full disk or a kill would stop it.
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("trigger"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(
                QStringLiteral("CREATE TRIGGER stop_at_100 BEFORE INSERT ON messages WHEN "
                               "(SELECT count(*) FROM messages) >= 100 BEGIN SELECT RAISE(ABORT, 'full'); END")));
        }
        QSqlDatabase::removeDatabase(QStringLiteral("trigger"));
        ImportedConversation big;
        big.title = QStringLiteral("big");
        for (int i = 0; i < 1000; ++i) {
            MessageRecord m;
            m.role = i % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
            m.content = QStringLiteral("message %1").arg(i);
            big.messages.append(m);
        }
        QCOMPARE(ConversationExporter::store(store, big), 0);
        QCOMPARE(store.conversations().size(), 0);
        HistoryStore reopened;
        QVERIFY(reopened.open(path).ok());
        QCOMPARE(reopened.conversations().size(), 0);
        // A normal import still works afterwards (the transaction was closed).
        big.messages.resize(50);
        const qint64 id = ConversationExporter::store(store, big);
        QVERIFY(id != 0);
        QCOMPARE(store.messages(id).size(), 50);
        QCOMPARE(store.conversation(id)->currentLeafId, store.messages(id).last().id);
    }
};

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    if (argc == 3 && QByteArray(argv[1]) == "--streaming-child")
        return runStreamingChild(QString::fromLocal8Bit(argv[2]));
    TestChatPersistence test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_chat_persistence.moc"
