#include "gui/chat/history_store.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <spdlog/spdlog.h>

#include <atomic>

namespace brook {

namespace {

constexpr int kSchemaVersion = 2;  // 2: messages.cached_tokens

const char* const kSchema[] = {
    "CREATE TABLE IF NOT EXISTS conversations ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " title TEXT NOT NULL,"
    " settings TEXT NOT NULL DEFAULT '{}',"
    " current_leaf INTEGER NOT NULL DEFAULT 0,"
    " created_at INTEGER NOT NULL,"
    " updated_at INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS messages ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    " parent_id INTEGER NOT NULL DEFAULT 0,"
    " role TEXT NOT NULL,"
    " content TEXT NOT NULL,"
    " created_at INTEGER NOT NULL,"
    " prompt_tokens INTEGER NOT NULL DEFAULT 0,"
    " output_tokens INTEGER NOT NULL DEFAULT 0,"
    " ttft REAL NOT NULL DEFAULT 0,"
    " tokens_per_second REAL NOT NULL DEFAULT 0,"
    " finish_reason TEXT NOT NULL DEFAULT '',"
    " cached_tokens INTEGER NOT NULL DEFAULT 0)",
    "CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id)",
};

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

// A null QString binds as SQL NULL; the text columns are NOT NULL, so bind "" instead.
QString text(const QString& s) { return s.isNull() ? QStringLiteral("") : s; }

ConversationRecord readConversation(const QSqlQuery& q)
{
    ConversationRecord c;
    c.id = q.value(0).toLongLong();
    c.title = q.value(1).toString();
    c.settings = ChatSettings::fromJson(QJsonDocument::fromJson(q.value(2).toString().toUtf8()).object());
    c.currentLeafId = q.value(3).toLongLong();
    c.createdAt = QDateTime::fromMSecsSinceEpoch(q.value(4).toLongLong());
    c.updatedAt = QDateTime::fromMSecsSinceEpoch(q.value(5).toLongLong());
    return c;
}

QString settingsText(const ChatSettings& s)
{
    return QString::fromUtf8(QJsonDocument(s.toJson()).toJson(QJsonDocument::Compact));
}

}  // namespace

HistoryStore::HistoryStore()
{
    static std::atomic<int> counter{0};
    m_connectionName = QStringLiteral("brook-history-%1").arg(counter++);
}

HistoryStore::~HistoryStore() { close(); }

void HistoryStore::noteError(const QString& what, const QString& error) const
{
    m_lastError = what + QStringLiteral(": ") + error;
    spdlog::error("history: {}", m_lastError.toStdString());
}

Result<void> HistoryStore::exec(const QString& sql)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    if (!q.exec(sql)) return makeError(m_path.toStdString() + ": " + q.lastError().text().toStdString());
    return {};
}

Result<void> HistoryStore::open(const QString& path)
{
    close();
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE")))
        return makeError("the Qt SQLite driver (QSQLITE) is not installed");
    QDir().mkpath(QFileInfo(path).absolutePath());
    m_path = path;
    std::string why;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connectionName);
        db.setDatabaseName(path);
        if (!db.open()) why = db.lastError().text().toStdString();
    }
    if (!why.empty()) {
        close();
        return makeError(path.toStdString() + ": " + why);
    }
    // WAL: readers never block the writer and a commit is one append; NORMAL sync keeps every
    // committed message across an application crash (only a power cut may lose the last ones).
    for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
        if (auto r = exec(QString::fromLatin1(pragma)); !r) {
            close();
            return r;
        }
    }
    for (const char* statement : kSchema) {
        if (auto r = exec(QString::fromLatin1(statement)); !r) {
            close();
            return r;
        }
    }
    if (auto r = addColumnsOfLaterVersions(); !r) {
        close();
        return r;
    }
    if (auto r = exec(QStringLiteral("PRAGMA user_version=%1").arg(kSchemaVersion)); !r) return r;
    spdlog::info("history: {} ({} conversations)", path.toStdString(), conversations().size());
    return {};
}

Result<void> HistoryStore::addColumnsOfLaterVersions()
{
    // A history written before a column existed gets it with its default; CREATE TABLE IF NOT
    // EXISTS leaves an old table as it was.
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    if (!q.exec(QStringLiteral("PRAGMA table_info(messages)")))
        return makeError(m_path.toStdString() + ": " + q.lastError().text().toStdString());
    bool hasCachedTokens = false;
    while (q.next())
        if (q.value(1).toString() == QLatin1String("cached_tokens")) hasCachedTokens = true;
    if (hasCachedTokens) return {};
    return exec(QStringLiteral("ALTER TABLE messages ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0"));
}

void HistoryStore::close()
{
    if (!QSqlDatabase::contains(m_connectionName)) return;
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        if (db.isOpen()) db.close();
    }
    QSqlDatabase::removeDatabase(m_connectionName);
}

bool HistoryStore::isOpen() const
{
    return QSqlDatabase::contains(m_connectionName) && QSqlDatabase::database(m_connectionName, false).isOpen();
}

QString HistoryStore::journalMode() const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    if (q.exec(QStringLiteral("PRAGMA journal_mode")) && q.next()) return q.value(0).toString().toLower();
    return {};
}

qint64 HistoryStore::createConversation(const QString& title, const ChatSettings& settings)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(
        QStringLiteral("INSERT INTO conversations (title, settings, created_at, updated_at) VALUES (?, ?, ?, ?)"));
    const qint64 now = nowMs();
    q.addBindValue(text(title));
    q.addBindValue(settingsText(settings));
    q.addBindValue(now);
    q.addBindValue(now);
    if (!q.exec()) {
        noteError(QStringLiteral("create conversation"), q.lastError().text());
        return 0;
    }
    return q.lastInsertId().toLongLong();
}

QList<ConversationRecord> HistoryStore::conversations(const QString& filter) const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    const QString columns =
        QStringLiteral("SELECT id, title, settings, current_leaf, created_at, updated_at FROM conversations c");
    if (filter.trimmed().isEmpty()) {
        q.prepare(columns + QStringLiteral(" ORDER BY updated_at DESC, id DESC"));
    } else {
        // LIKE is case-insensitive for ASCII; Chinese has no case, so this is enough here.
        q.prepare(columns + QStringLiteral(" WHERE c.title LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM messages m"
                                           " WHERE m.conversation_id = c.id AND m.content LIKE ? ESCAPE '\\')"
                                           " ORDER BY updated_at DESC, id DESC"));
        QString escaped = filter.trimmed();
        escaped.replace(QLatin1Char('\\'), QLatin1String("\\\\"))
            .replace(QLatin1Char('%'), QLatin1String("\\%"))
            .replace(QLatin1Char('_'), QLatin1String("\\_"));
        const QString pattern = QLatin1Char('%') + escaped + QLatin1Char('%');
        q.addBindValue(pattern);
        q.addBindValue(pattern);
    }
    QList<ConversationRecord> out;
    if (!q.exec()) {
        noteError(QStringLiteral("list conversations"), q.lastError().text());
        return out;
    }
    while (q.next()) out.append(readConversation(q));
    return out;
}

std::optional<ConversationRecord> HistoryStore::conversation(qint64 id) const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(QStringLiteral(
        "SELECT id, title, settings, current_leaf, created_at, updated_at FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) return std::nullopt;
    return readConversation(q);
}

bool HistoryStore::touch(qint64 conversationId)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(QStringLiteral("UPDATE conversations SET updated_at = ? WHERE id = ?"));
    q.addBindValue(nowMs());
    q.addBindValue(conversationId);
    return q.exec();
}

bool HistoryStore::renameConversation(qint64 id, const QString& title)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(QStringLiteral("UPDATE conversations SET title = ? WHERE id = ?"));
    q.addBindValue(text(title));
    q.addBindValue(id);
    if (!q.exec()) noteError(QStringLiteral("rename conversation"), q.lastError().text());
    return q.numRowsAffected() == 1;
}

bool HistoryStore::updateSettings(qint64 id, const ChatSettings& settings)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(QStringLiteral("UPDATE conversations SET settings = ? WHERE id = ?"));
    q.addBindValue(settingsText(settings));
    q.addBindValue(id);
    if (!q.exec()) noteError(QStringLiteral("save settings"), q.lastError().text());
    return q.numRowsAffected() == 1;
}

bool HistoryStore::setCurrentLeaf(qint64 id, qint64 leafMessageId)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(QStringLiteral("UPDATE conversations SET current_leaf = ? WHERE id = ?"));
    q.addBindValue(leafMessageId);
    q.addBindValue(id);
    if (!q.exec()) noteError(QStringLiteral("save branch"), q.lastError().text());
    return q.numRowsAffected() == 1;
}

bool HistoryStore::deleteConversation(qint64 id)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(QStringLiteral("DELETE FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) noteError(QStringLiteral("delete conversation"), q.lastError().text());
    return q.numRowsAffected() == 1;
}

int HistoryStore::deleteEmptyConversations()
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    if (!q.exec(QStringLiteral("DELETE FROM conversations WHERE NOT EXISTS"
                               " (SELECT 1 FROM messages WHERE messages.conversation_id = conversations.id)"))) {
        noteError(QStringLiteral("delete empty conversations"), q.lastError().text());
        return 0;
    }
    return q.numRowsAffected();
}

qint64 HistoryStore::addMessage(const MessageRecord& m)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(
        QStringLiteral("INSERT INTO messages (conversation_id, parent_id, role, content, created_at, prompt_tokens,"
                       " output_tokens, ttft, tokens_per_second, finish_reason, cached_tokens)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(m.conversationId);
    q.addBindValue(m.parentId);
    q.addBindValue(text(m.role));
    q.addBindValue(text(m.content));
    q.addBindValue(m.createdAt.isValid() ? m.createdAt.toMSecsSinceEpoch() : nowMs());
    q.addBindValue(m.promptTokens);
    q.addBindValue(m.outputTokens);
    q.addBindValue(m.ttftSeconds);
    q.addBindValue(m.tokensPerSecond);
    q.addBindValue(text(m.finishReason));
    q.addBindValue(m.cachedTokens);
    if (!q.exec()) {
        noteError(QStringLiteral("store message"), q.lastError().text());
        return 0;
    }
    const qint64 id = q.lastInsertId().toLongLong();
    touch(m.conversationId);
    return id;
}

bool HistoryStore::updateMessage(const MessageRecord& m)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(QStringLiteral("UPDATE messages SET content = ?, prompt_tokens = ?, output_tokens = ?, ttft = ?,"
                             " tokens_per_second = ?, finish_reason = ?, cached_tokens = ? WHERE id = ?"));
    q.addBindValue(text(m.content));
    q.addBindValue(m.promptTokens);
    q.addBindValue(m.outputTokens);
    q.addBindValue(m.ttftSeconds);
    q.addBindValue(m.tokensPerSecond);
    q.addBindValue(text(m.finishReason));
    q.addBindValue(m.cachedTokens);
    q.addBindValue(m.id);
    if (!q.exec()) {
        noteError(QStringLiteral("update message"), q.lastError().text());
        return false;
    }
    return q.numRowsAffected() == 1;
}

bool HistoryStore::beginTransaction()
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName);
    if (db.transaction()) return true;
    noteError(QStringLiteral("begin transaction"), db.lastError().text());
    return false;
}

bool HistoryStore::commitTransaction()
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName);
    if (db.commit()) return true;
    noteError(QStringLiteral("commit"), db.lastError().text());
    db.rollback();
    return false;
}

void HistoryStore::rollbackTransaction() { QSqlDatabase::database(m_connectionName).rollback(); }

QList<MessageRecord> HistoryStore::messages(qint64 conversationId) const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(
        QStringLiteral("SELECT id, conversation_id, parent_id, role, content, created_at, prompt_tokens, output_tokens,"
                       " ttft, tokens_per_second, finish_reason, cached_tokens FROM messages"
                       " WHERE conversation_id = ? ORDER BY id"));
    q.addBindValue(conversationId);
    QList<MessageRecord> out;
    if (!q.exec()) {
        noteError(QStringLiteral("load messages"), q.lastError().text());
        return out;
    }
    while (q.next()) {
        MessageRecord m;
        m.id = q.value(0).toLongLong();
        m.conversationId = q.value(1).toLongLong();
        m.parentId = q.value(2).toLongLong();
        m.role = q.value(3).toString();
        m.content = q.value(4).toString();
        m.createdAt = QDateTime::fromMSecsSinceEpoch(q.value(5).toLongLong());
        m.promptTokens = q.value(6).toInt();
        m.outputTokens = q.value(7).toInt();
        m.ttftSeconds = q.value(8).toDouble();
        m.tokensPerSecond = q.value(9).toDouble();
        m.finishReason = q.value(10).toString();
        m.cachedTokens = q.value(11).toInt();
        out.append(m);
    }
    return out;
}

int HistoryStore::deleteMessageTree(qint64 messageId)
{
    // A recursive CTE collects the subtree; one statement, one transaction.
    QSqlQuery q(QSqlDatabase::database(m_connectionName));
    q.prepare(QStringLiteral("WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT m.id FROM messages m JOIN sub"
                             " ON m.parent_id = sub.id) DELETE FROM messages WHERE id IN (SELECT id FROM sub)"));
    q.addBindValue(messageId);
    if (!q.exec()) {
        noteError(QStringLiteral("delete message"), q.lastError().text());
        return 0;
    }
    return q.numRowsAffected();
}

}  // namespace brook
