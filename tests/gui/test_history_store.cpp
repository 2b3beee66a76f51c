// HistoryStore: WAL mode, everything survives closing and reopening (and a process that dies
// without closing), search over titles and message text, subtree and cascade deletion.
#include "gui/chat/history_store.h"

#include <QCoreApplication>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <random>

using namespace brook;

namespace {

// Child mode: store messages one by one, then die without closing anything (as a crash or a
// kill -9 would). Runs before QTest takes over main.
const bool kChildRan = [] {
    const char* path = std::getenv("BROOK_HISTORY_CRASH_CHILD");
    if (!path) return false;
    int argc = 1;
    char name[] = "child";
    char* argv[] = {name, nullptr};
    QCoreApplication app(argc, argv);
    HistoryStore store;
    if (!store.open(QString::fromLocal8Bit(path))) std::_Exit(3);
    const qint64 c = store.createConversation(QStringLiteral("crash"), ChatSettings());
    qint64 parent = 0;
    for (int i = 0; i < 25; ++i) {
        MessageRecord m;
        m.conversationId = c;
        m.parentId = parent;
        m.role = i % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
        m.content = QStringLiteral("message %1").arg(i);
        parent = store.addMessage(m);
    }
    std::_Exit(0);  // no destructors, no close: the connection is simply gone
}();

QString randomText(std::mt19937& rng, int length)
{
    static const QString alphabet = QStringLiteral("abcdefghij klmnop 你好世界总结写作 *#`_%");
    std::uniform_int_distribution<int> pick(0, int(alphabet.size()) - 1);
    QString s;
    for (int i = 0; i < length; ++i) s += alphabet[pick(rng)];
    return s;
}

}  // namespace

class TestHistoryStore : public QObject {
    Q_OBJECT
private slots:
    void opensInWalMode()
    {
        QTemporaryDir dir;
        HistoryStore store;
        QVERIFY(store.open(dir.filePath("h.sqlite")).ok());
        QCOMPARE(store.journalMode(), QStringLiteral("wal"));
    }

    void everythingSurvivesReopening()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("h.sqlite");
        std::mt19937 rng(42);
        QList<MessageRecord> written;
        qint64 conversation = 0;
        ChatSettings settings;
        settings.systemPrompt = randomText(rng, 30);
        settings.temperature = 0.37;
        settings.topK = 17;
        settings.seed = 991;
        settings.inputTemplate = QStringLiteral("【任务】{input}");
        {
            HistoryStore store;
            QVERIFY(store.open(path).ok());
            conversation = store.createConversation(QStringLiteral("标题 title"), settings);
            QVERIFY(conversation > 0);
            // A random tree: each message hangs under a random earlier one (or is a root).
            for (int i = 0; i < 40; ++i) {
                MessageRecord m;
                m.conversationId = conversation;
                m.parentId = written.isEmpty()
                                 ? 0
                                 : written[std::uniform_int_distribution<int>(0, int(written.size()) - 1)(rng)].id;
                m.role = i % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
                m.content = randomText(rng, 5 + i * 3);
                m.outputTokens = i * 7;
                m.promptTokens = i + 1;
                m.cachedTokens = i / 2;
                m.ttftSeconds = 0.01 * i;
                m.tokensPerSecond = 3.5 * i;
                m.finishReason = i % 3 ? QStringLiteral("stop") : QStringLiteral("abort");
                m.createdAt = QDateTime::fromMSecsSinceEpoch(1700000000000LL + i * 1000);
                m.id = store.addMessage(m);
                QVERIFY(m.id > 0);
                written.append(m);
            }
            QVERIFY(store.setCurrentLeaf(conversation, written[17].id));
        }
        HistoryStore reopened;
        QVERIFY(reopened.open(path).ok());
        const auto c = reopened.conversation(conversation);
        QVERIFY(c.has_value());
        QCOMPARE(c->title, QStringLiteral("标题 title"));
        QCOMPARE(c->settings, settings);
        QCOMPARE(c->currentLeafId, written[17].id);
        const QList<MessageRecord> read = reopened.messages(conversation);
        QCOMPARE(read.size(), written.size());
        for (int i = 0; i < read.size(); ++i) {
            QCOMPARE(read[i].id, written[i].id);
            QCOMPARE(read[i].parentId, written[i].parentId);
            QCOMPARE(read[i].role, written[i].role);
            QCOMPARE(read[i].content, written[i].content);
            QCOMPARE(read[i].outputTokens, written[i].outputTokens);
            QCOMPARE(read[i].promptTokens, written[i].promptTokens);
            QCOMPARE(read[i].cachedTokens, written[i].cachedTokens);
            QCOMPARE(read[i].ttftSeconds, written[i].ttftSeconds);
            QCOMPARE(read[i].tokensPerSecond, written[i].tokensPerSecond);
            QCOMPARE(read[i].finishReason, written[i].finishReason);
            QCOMPARE(read[i].createdAt, written[i].createdAt);
        }
    }

    void aHistoryFromBeforeCachedTokensOpensAndGainsTheColumn()
    {
        // A version-1 file (no cached_tokens column), as the app wrote it before prefix caching.
        QTemporaryDir dir;
        const QString path = dir.filePath("old.sqlite");
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("old"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(
                QStringLiteral("CREATE TABLE conversations (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL,"
                               " settings TEXT NOT NULL DEFAULT '{}', current_leaf INTEGER NOT NULL DEFAULT 0,"
                               " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)")));
            QVERIFY(q.exec(QStringLiteral(
                "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL,"
                " parent_id INTEGER NOT NULL DEFAULT 0, role TEXT NOT NULL, content TEXT NOT NULL,"
                " created_at INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL DEFAULT 0,"
                " output_tokens INTEGER NOT NULL DEFAULT 0, ttft REAL NOT NULL DEFAULT 0,"
                " tokens_per_second REAL NOT NULL DEFAULT 0, finish_reason TEXT NOT NULL DEFAULT '')")));
            QVERIFY(q.exec(QStringLiteral("INSERT INTO conversations (title, created_at, updated_at)"
                                          " VALUES ('old', 1, 1)")));
            QVERIFY(q.exec(QStringLiteral("INSERT INTO messages (conversation_id, role, content, created_at,"
                                          " prompt_tokens) VALUES (1, 'assistant', 'kept', 1, 77)")));
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version=1")));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("old"));
        HistoryStore store;
        QVERIFY(store.open(path).ok());
        QList<MessageRecord> read = store.messages(1);
        QCOMPARE(read.size(), 1);
        QCOMPARE(read[0].content, QStringLiteral("kept"));
        QCOMPARE(read[0].promptTokens, 77);
        QCOMPARE(read[0].cachedTokens, 0);
        read[0].cachedTokens = 64;
        QVERIFY(store.updateMessage(read[0]));
        QCOMPARE(store.messages(1)[0].cachedTokens, 64);
    }

    void aKilledProcessLosesNothingItCompleted()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("h.sqlite");
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("BROOK_HISTORY_CRASH_CHILD"), path);
        child.setProcessEnvironment(env);
        child.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY(child.waitForFinished(30000));
        QCOMPARE(child.exitCode(), 0);
        HistoryStore store;
        QVERIFY(store.open(path).ok());
        const auto conversations = store.conversations();
        QCOMPARE(conversations.size(), 1);
        const QList<MessageRecord> messages = store.messages(conversations[0].id);
        QCOMPARE(messages.size(), 25);
        QCOMPARE(messages.last().content, QStringLiteral("message 24"));
    }

    void searchMatchesTitlesAndMessageText()
    {
        QTemporaryDir dir;
        HistoryStore store;
        QVERIFY(store.open(dir.filePath("h.sqlite")).ok());
        const qint64 a = store.createConversation(QStringLiteral("Rust lifetimes"), ChatSettings());
        const qint64 b = store.createConversation(QStringLiteral("旅行计划"), ChatSettings());
        const qint64 c = store.createConversation(QStringLiteral("100% sure_thing"), ChatSettings());
        QTest::qSleep(5);  // updated_at has millisecond resolution
        MessageRecord m;
        m.conversationId = b;
        m.role = QStringLiteral("user");
        m.content = QStringLiteral("请帮我总结一下 the BORROW checker");
        QVERIFY(store.addMessage(m) > 0);

        auto ids = [&](const QString& filter) {
            QList<qint64> out;
            for (const auto& r : store.conversations(filter)) out << r.id;
            std::sort(out.begin(), out.end());
            return out;
        };
        QCOMPARE(ids(QString()).size(), 3);
        QCOMPARE(ids(QStringLiteral("rust")), QList<qint64>{a});
        QCOMPARE(ids(QStringLiteral("borrow")), QList<qint64>{b});  // message text, any case
        QCOMPARE(ids(QStringLiteral("总结")), QList<qint64>{b});
        QCOMPARE(ids(QStringLiteral("旅行")), QList<qint64>{b});
        QCOMPARE(ids(QStringLiteral("%")), QList<qint64>{c});  // wildcards are literal
        QCOMPARE(ids(QStringLiteral("_")), QList<qint64>{c});
        QVERIFY(ids(QStringLiteral("nothing like this")).isEmpty());
        // Newest activity first: b got a message last.
        QCOMPARE(store.conversations().first().id, b);
    }

    void deletingAMessageTakesItsRepliesAndDeletingAConversationTakesAll()
    {
        QTemporaryDir dir;
        HistoryStore store;
        QVERIFY(store.open(dir.filePath("h.sqlite")).ok());
        const qint64 c = store.createConversation(QStringLiteral("t"), ChatSettings());
        auto add = [&](qint64 parent) {
            MessageRecord m;
            m.conversationId = c;
            m.parentId = parent;
            m.role = QStringLiteral("user");
            m.content = QStringLiteral("x");
            return store.addMessage(m);
        };
        const qint64 root = add(0);
        const qint64 left = add(root);
        const qint64 right = add(root);
        add(left);
        add(add(left));
        add(right);
        QCOMPARE(store.messages(c).size(), 7);
        QCOMPARE(store.deleteMessageTree(left), 4);
        QCOMPARE(store.messages(c).size(), 3);
        QVERIFY(store.deleteConversation(c));
        QVERIFY(!store.conversation(c).has_value());
        QCOMPARE(store.messages(c).size(), 0);  // foreign key cascade
    }

    void settingsAndTitleUpdatesPersist()
    {
        QTemporaryDir dir;
        HistoryStore store;
        QVERIFY(store.open(dir.filePath("h.sqlite")).ok());
        const qint64 c = store.createConversation(QString(), ChatSettings());
        ChatSettings s;
        s.maxTokens = 77;
        s.presetName = QStringLiteral("summary");
        QVERIFY(store.updateSettings(c, s));
        QVERIFY(store.renameConversation(c, QStringLiteral("new name")));
        QCOMPARE(store.conversation(c)->settings, s);
        QCOMPARE(store.conversation(c)->title, QStringLiteral("new name"));
        QVERIFY(!store.renameConversation(c + 100, QStringLiteral("none")));
    }

    void emptyConversationsAreSweptAndOthersStay()
    {
        QTemporaryDir dir;
        HistoryStore store;
        QVERIFY(store.open(dir.filePath("h.sqlite")).ok());
        const qint64 empty1 = store.createConversation(QString(), ChatSettings());
        const qint64 kept = store.createConversation(QStringLiteral("kept"), ChatSettings());
        const qint64 empty2 = store.createConversation(QStringLiteral("named but empty"), ChatSettings());
        MessageRecord m;
        m.conversationId = kept;
        m.role = QStringLiteral("user");
        m.content = QStringLiteral("hello");
        QVERIFY(store.addMessage(m) > 0);
        QCOMPARE(store.deleteEmptyConversations(), 2);
        QVERIFY(!store.conversation(empty1) && !store.conversation(empty2));
        QCOMPARE(store.messages(kept).size(), 1);
        QCOMPARE(store.deleteEmptyConversations(), 0);
    }

    void anUnwritablePathIsAnError()
    {
        HistoryStore store;
        auto r = store.open(QStringLiteral("/proc/brook-cannot-write-here/h.sqlite"));
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.error()).contains(QStringLiteral("h.sqlite")));
    }
};

QTEST_GUILESS_MAIN(TestHistoryStore)
#include "test_history_store.moc"
