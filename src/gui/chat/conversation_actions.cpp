#include "gui/chat/conversation_actions.h"

#include "gui/chat/chat_area.h"
#include "gui/chat/chat_pane.h"
#include "gui/chat/chat_session.h"
#include "gui/chat/conversation_exporter.h"
#include "gui/chat/conversation_list_panel.h"
#include "gui/chat/history_store.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QRegularExpression>

namespace brook {

ConversationActions::ConversationActions(HistoryStore& store, ChatArea& chats, ConversationListPanel& list,
                                         QWidget* window)
    : QObject(window), m_store(store), m_chats(chats), m_list(list), m_window(window)
{}

qint64 ConversationActions::importFile(const QString& path, QString* error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = tr("Cannot read %1: %2").arg(path, file.errorString());
        return 0;
    }
    auto imported = ConversationExporter::fromOpenAiJson(file.readAll());
    if (!imported) {
        *error =
            tr("%1 is not a conversation Brook can import: %2").arg(path, QString::fromStdString(imported.error()));
        return 0;
    }
    const qint64 id = ConversationExporter::store(m_store, *imported);
    m_list.reload();
    if (!id) {
        *error = tr("Could not store the conversation: %1").arg(m_store.lastError());
        return 0;
    }
    emit conversationImported(id);
    return id;
}

void ConversationActions::importInteractively()
{
    const QString path =
        QFileDialog::getOpenFileName(m_window, tr("Import a conversation"), QDir::homePath(), tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!importFile(path, &error)) QMessageBox::warning(m_window, tr("Import"), error);
}

bool ConversationActions::exportTo(ChatPane* pane, const QString& path, bool markdown, const QString& modelName,
                                   QString* error)
{
    ChatSession* session = pane->session();
    const auto record = m_store.conversation(session->conversationId());
    if (!record) {
        *error = tr("The conversation is no longer in the history.");
        return false;
    }
    const QList<MessageRecord> messages = session->visibleMessages();
    const QByteArray data = markdown ? ConversationExporter::toMarkdown(*record, messages).toUtf8()
                                     : ConversationExporter::toOpenAiJson(*record, messages, modelName);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(data) != data.size()) {
        *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

void ConversationActions::exportInteractively(const QString& format, const QString& modelName)
{
    ChatPane* pane = m_chats.currentPane();
    if (!pane) return;
    const bool markdown = format == QLatin1String("md");
    QString name = pane->displayTitle();
    name.replace(QRegularExpression(QStringLiteral("[\\\\/:*?\"<>|]")), QStringLiteral("_"));
    const QString path = QFileDialog::getSaveFileName(m_window, tr("Export conversation"),
                                                      QDir::home().filePath(name + (markdown ? ".md" : ".json")),
                                                      markdown ? tr("Markdown (*.md)") : tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (exportTo(pane, path, markdown, modelName, &error)) emit statusMessage(tr("Saved %1").arg(path));
    else QMessageBox::warning(m_window, tr("Export"), error);
}

void ConversationActions::renameInteractively(qint64 id)
{
    const auto record = m_store.conversation(id);
    if (!record) return;
    bool ok = false;
    const QString title =
        QInputDialog::getText(m_window, tr("Rename"), tr("Title:"), QLineEdit::Normal, record->title, &ok);
    if (!ok) return;
    if (ChatPane* pane = m_chats.paneFor(id)) pane->session()->rename(title);
    else m_store.renameConversation(id, title.trimmed());
    m_list.reload();
}

void ConversationActions::deleteInteractively(qint64 id)
{
    if (QMessageBox::question(m_window, tr("Delete conversation"),
                              tr("Delete this conversation and all its messages?")) != QMessageBox::Yes)
        return;
    if (ChatPane* pane = m_chats.paneFor(id)) m_chats.closePane(pane);
    m_store.deleteConversation(id);
    m_list.reload();
}

}  // namespace brook
