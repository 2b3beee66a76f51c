// ConversationActions: what the File menu and the conversation list do to whole conversations:
// import (OpenAI JSON), export the shown branch (Markdown or JSON), rename and delete. Asks the
// user through dialogs parented to the window; reports through the status message signal.
// GUI thread only.
#pragma once

#include <QObject>
#include <QString>

class QWidget;

namespace brook {

class ChatArea;
class ChatPane;
class ConversationListPanel;
class HistoryStore;

class ConversationActions : public QObject {
    Q_OBJECT
public:
    ConversationActions(HistoryStore& store, ChatArea& chats, ConversationListPanel& list, QWidget* window);

    // Imports and returns the new conversation's id, or 0 with `error` set.
    qint64 importFile(const QString& path, QString* error);
    // Writes the pane's shown branch; false with `error` set when the file cannot be written.
    bool exportTo(ChatPane* pane, const QString& path, bool markdown, const QString& modelName, QString* error);

public slots:
    void importInteractively();                                                 // file dialog, then importFile
    void exportInteractively(const QString& format, const QString& modelName);  // "md" or "json"
    void renameInteractively(qint64 id);
    void deleteInteractively(qint64 id);

signals:
    void conversationImported(qint64 id);
    void statusMessage(const QString& message);

private:
    HistoryStore& m_store;
    ChatArea& m_chats;
    ConversationListPanel& m_list;
    QWidget* m_window;
};

}  // namespace brook
