// MessageBubble: one message in a chat pane: who said it, the branch switcher (‹ 2/3 ›) when
// regenerate or edit made siblings, the rendered body, the per-message numbers (tokens, time to
// first token, tokens/s) and the actions: copy, edit and resend (user), regenerate (assistant),
// delete. A bubble with id 0 is the reply being streamed.
#pragma once

#include "gui/chat/message_record.h"

#include <QFrame>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QToolButton;

namespace brook {

class MarkdownView;

class MessageBubble : public QFrame {
    Q_OBJECT
public:
    MessageBubble(const MessageRecord& message, int siblingIndex, int siblingCount, QWidget* parent = nullptr);

    qint64 messageId() const { return m_message.id; }
    const MessageRecord& message() const { return m_message; }
    bool isStreaming() const { return m_message.id == 0; }
    QString renderedText() const;

    void setStreamingText(const QString& text, int outputTokens);
    void setActionsEnabled(bool enabled);  // off while the conversation generates
    void startEditing();

signals:
    void editRequested(qint64 messageId, const QString& text);
    void regenerateRequested(qint64 messageId);
    void deleteRequested(qint64 messageId);
    void branchRequested(qint64 messageId, int delta);

protected:
    void changeEvent(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;

private slots:
    void handleCopy();
    void handleEditSave();
    void handleEditCancel();

private:
    void retranslateUi();
    QString statsText() const;

    MessageRecord m_message;
    int m_siblingIndex;
    int m_siblingCount;
    int m_streamingTokens = 0;
    QLabel* m_role;
    QLabel* m_branchLabel;
    QToolButton* m_previous;
    QToolButton* m_next;
    MarkdownView* m_body;
    QPlainTextEdit* m_editor;
    QPushButton* m_save;
    QPushButton* m_cancel;
    QWidget* m_editButtons;
    QLabel* m_stats;
    QToolButton* m_copy;
    QToolButton* m_edit;
    QToolButton* m_regenerate;
    QToolButton* m_delete;
};

}  // namespace brook
