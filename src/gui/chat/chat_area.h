// ChatArea: the chat panes, in tabs, on one side or two sides of a splitter (side by side), so
// several conversations can be read and generate at the same time. Tracks the pane the user is
// working in (the one menu actions apply to).
#pragma once

#include <QList>
#include <QWidget>

class QSplitter;
class QTabWidget;

namespace brook {

class ChatPane;

class ChatArea : public QWidget {
    Q_OBJECT
public:
    explicit ChatArea(QWidget* parent = nullptr);
    ~ChatArea() override;  // quiet: tab widgets dying one by one must not call back into it

    // Adds the pane on the active side, or on the other side (opening it) when `beside`.
    void addPane(ChatPane* pane, bool beside = false);
    ChatPane* currentPane() const;
    ChatPane* paneFor(qint64 conversationId) const;
    QList<ChatPane*> panes() const;
    void showPane(ChatPane* pane);
    void closePane(ChatPane* pane);
    void moveToOtherSide(ChatPane* pane);
    int sideCount() const;
    int sideIndexOf(const ChatPane* pane) const;  // 0 left, 1 right; -1 when not shown

protected:
    void changeEvent(QEvent* event) override;

signals:
    void currentPaneChanged(brook::ChatPane* pane);
    void paneCountChanged(int count);

private slots:
    void handleFocusChanged(QWidget* old, QWidget* now);
    void handleTabCloseRequested(int index);

private:
    QTabWidget* makeSide();
    QTabWidget* sideOf(ChatPane* pane) const;
    void updateTabTitle(ChatPane* pane);
    void setActive(QTabWidget* side);
    void removeEmptySides();

    QSplitter* m_splitter;
    QList<QTabWidget*> m_sides;
    QTabWidget* m_active = nullptr;
};

}  // namespace brook
