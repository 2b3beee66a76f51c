// ConversationListPanel: the conversation list beside the chat panes, newest first, with a
// search box that matches titles and message text (debounced, queried from HistoryStore), a
// New chat button and a context menu (open side by side, rename, export, delete).
#pragma once

#include <QWidget>

class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QTimer;

namespace brook {

class HistoryStore;

class ConversationListPanel : public QWidget {
    Q_OBJECT
public:
    explicit ConversationListPanel(HistoryStore& store, QWidget* parent = nullptr);

    void reload();  // re-queries with the current search text
    void setCurrentConversation(qint64 id);
    QListWidget* list() const { return m_list; }
    QLineEdit* searchBox() const { return m_search; }

signals:
    void conversationActivated(qint64 id);
    void openBesideRequested(qint64 id);
    void newConversationRequested();
    void renameRequested(qint64 id);
    void exportRequested(qint64 id);
    void deleteRequested(qint64 id);

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handleItemActivated(QListWidgetItem* item);
    void handleContextMenu(const QPoint& position);

private:
    void retranslateUi();

    HistoryStore& m_store;
    qint64 m_current = 0;
    QLineEdit* m_search;
    QListWidget* m_list;
    QPushButton* m_new;
    QTimer* m_searchDelay;
};

}  // namespace brook
