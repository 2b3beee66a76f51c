#include "gui/chat/message_bubble.h"

#include "gui/chat/markdown_view.h"
#include "gui/shell/vector_icon_engine.h"

#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace brook {

namespace {

QToolButton* makeToolButton(QWidget* parent, IconShape shape, const char* objectName)
{
    auto* b = new QToolButton(parent);
    b->setObjectName(QLatin1String(objectName));
    b->setIcon(VectorIconEngine::icon(shape));
    b->setAutoRaise(true);
    b->setIconSize(QSize(16, 16));
    return b;
}

}  // namespace

MessageBubble::MessageBubble(const MessageRecord& message, int siblingIndex, int siblingCount, QWidget* parent)
    : QFrame(parent), m_message(message), m_siblingIndex(siblingIndex), m_siblingCount(siblingCount)
{
    setObjectName(m_message.isUser() ? QStringLiteral("userBubble") : QStringLiteral("assistantBubble"));

    m_role = new QLabel(this);
    QFont bold = m_role->font();
    bold.setBold(true);
    m_role->setFont(bold);
    m_previous = makeToolButton(this, IconShape::PreviousBranch, "previousBranch");
    m_next = makeToolButton(this, IconShape::NextBranch, "nextBranch");
    m_branchLabel = new QLabel(QStringLiteral("%1/%2").arg(siblingIndex + 1).arg(siblingCount), this);
    const bool branched = siblingCount > 1;
    m_previous->setVisible(branched);
    m_next->setVisible(branched);
    m_branchLabel->setVisible(branched);
    m_previous->setEnabled(siblingIndex > 0);
    m_next->setEnabled(siblingIndex + 1 < siblingCount);
    connect(m_previous, &QToolButton::clicked, this, [this] { emit branchRequested(m_message.id, -1); });
    connect(m_next, &QToolButton::clicked, this, [this] { emit branchRequested(m_message.id, +1); });

    auto* header = new QHBoxLayout;
    header->addWidget(m_role);
    header->addStretch();
    header->addWidget(m_previous);
    header->addWidget(m_branchLabel);
    header->addWidget(m_next);

    m_body = new MarkdownView(this);
    if (isStreaming()) m_body->setStreamingText(QString());
    else if (m_message.isUser()) m_body->setStreamingText(m_message.content);  // user text is shown as typed
    else m_body->setMarkdown(m_message.content);

    m_editor = new QPlainTextEdit(this);
    m_editor->setObjectName(QStringLiteral("messageEditor"));
    m_editor->setVisible(false);
    m_save = new QPushButton(this);
    m_save->setObjectName(QStringLiteral("saveEdit"));
    m_cancel = new QPushButton(this);
    m_editButtons = new QWidget(this);
    auto* editRow = new QHBoxLayout(m_editButtons);
    editRow->setContentsMargins(0, 0, 0, 0);
    editRow->addStretch();
    editRow->addWidget(m_cancel);
    editRow->addWidget(m_save);
    m_editButtons->setVisible(false);
    connect(m_save, &QPushButton::clicked, this, &MessageBubble::handleEditSave);
    connect(m_cancel, &QPushButton::clicked, this, &MessageBubble::handleEditCancel);

    m_stats = new QLabel(this);
    m_stats->setObjectName(QStringLiteral("messageStats"));
    QFont small = m_stats->font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    m_stats->setFont(small);
    m_stats->setForegroundRole(QPalette::PlaceholderText);
    // Wraps rather than widening the bubble: a narrow pane keeps the numbers and the actions.
    m_stats->setWordWrap(true);
    m_stats->setMinimumWidth(60);
    m_copy = makeToolButton(this, IconShape::Copy, "copyMessage");
    m_edit = makeToolButton(this, IconShape::Edit, "editMessage");
    m_regenerate = makeToolButton(this, IconShape::Regenerate, "regenerateMessage");
    m_delete = makeToolButton(this, IconShape::Delete, "deleteMessage");
    m_edit->setVisible(m_message.isUser());
    m_regenerate->setVisible(m_message.isAssistant());
    connect(m_copy, &QToolButton::clicked, this, &MessageBubble::handleCopy);
    connect(m_edit, &QToolButton::clicked, this, &MessageBubble::startEditing);
    connect(m_regenerate, &QToolButton::clicked, this, [this] { emit regenerateRequested(m_message.id); });
    connect(m_delete, &QToolButton::clicked, this, [this] { emit deleteRequested(m_message.id); });

    auto* footer = new QHBoxLayout;
    footer->addWidget(m_stats, 1);
    for (QToolButton* b : {m_copy, m_edit, m_regenerate, m_delete}) {
        b->setVisible(b->isVisibleTo(this) && !isStreaming());
        footer->addWidget(b);
    }

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(12, 8, 12, 6);
    layout->setSpacing(4);
    layout->addLayout(header);
    layout->addWidget(m_body);
    layout->addWidget(m_editor);
    layout->addWidget(m_editButtons);
    layout->addLayout(footer);

    retranslateUi();
}

QString MessageBubble::renderedText() const { return m_body->renderedText(); }

void MessageBubble::paintEvent(QPaintEvent* event)
{
    // Painted from the palette of the moment, not a style sheet: a style sheet fixes the palette
    // of the bubble and every child when it is set, so a theme switch left white text on a light
    // tint and icons drawn for the old background. User turns are tinted with the highlight
    // colour, replies sit on the base colour.
    const QPalette pal = palette();
    QColor background = pal.color(QPalette::Base);
    if (m_message.isUser()) {
        background = pal.color(QPalette::Highlight);
        background.setAlphaF(0.14);
    }
    QColor border = pal.color(QPalette::Mid);
    border.setAlpha(60);
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(border, 1));
    painter.setBrush(background);
    painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 10, 10);
    QFrame::paintEvent(event);
}

QString MessageBubble::statsText() const
{
    if (isStreaming())
        return m_streamingTokens > 0 ? tr("Generating… %1 tokens").arg(m_streamingTokens) : tr("Thinking…");
    if (!m_message.isAssistant() || m_message.outputTokens <= 0) return QString();
    QString text = tr("%1 tokens · first token %2 s · %3 tokens/s")
                       .arg(m_message.outputTokens)
                       .arg(m_message.ttftSeconds, 0, 'f', 2)
                       .arg(m_message.tokensPerSecond, 0, 'f', 1);
    // How much of the conversation so far the prefix cache spared the prefill.
    if (m_message.promptTokens > 0)
        text += QStringLiteral(" · ") +
                tr("%L1 of %L2 prompt tokens cached").arg(m_message.cachedTokens).arg(m_message.promptTokens);
    if (m_message.finishReason == QLatin1String("abort")) text += QStringLiteral(" · ") + tr("stopped");
    else if (m_message.finishReason == QLatin1String("length")) text += QStringLiteral(" · ") + tr("cut at max tokens");
    else if (m_message.finishReason == QLatin1String("context"))
        text += QStringLiteral(" · ") +
                tr("context full at %L1 tokens").arg(m_message.promptTokens + m_message.outputTokens);
    return text;
}

void MessageBubble::retranslateUi()
{
    m_role->setText(m_message.isUser() ? tr("You") : tr("Assistant"));
    m_previous->setToolTip(tr("Previous version"));
    m_next->setToolTip(tr("Next version"));
    m_save->setText(tr("Save and resend"));
    m_cancel->setText(tr("Cancel"));
    m_copy->setToolTip(tr("Copy message"));
    m_edit->setToolTip(tr("Edit and resend (the original stays as a branch)"));
    m_regenerate->setToolTip(tr("Regenerate (the current answer stays as a branch)"));
    m_delete->setToolTip(tr("Delete this message and its replies"));
    m_stats->setText(statsText());
}

void MessageBubble::setStreamingText(const QString& text, int outputTokens)
{
    m_streamingTokens = outputTokens;
    m_body->setStreamingText(text);
    m_stats->setText(statsText());
}

void MessageBubble::setActionsEnabled(bool enabled)
{
    for (QWidget* w :
         {static_cast<QWidget*>(m_edit), static_cast<QWidget*>(m_regenerate), static_cast<QWidget*>(m_delete),
          static_cast<QWidget*>(m_previous), static_cast<QWidget*>(m_next)})
        w->setEnabled(enabled);
    if (enabled) {
        m_previous->setEnabled(m_siblingIndex > 0);
        m_next->setEnabled(m_siblingIndex + 1 < m_siblingCount);
    }
}

void MessageBubble::handleCopy() { QApplication::clipboard()->setText(m_message.content); }

void MessageBubble::startEditing()
{
    if (!m_message.isUser()) return;
    m_editor->setPlainText(m_message.content);
    m_body->setVisible(false);
    m_editor->setVisible(true);
    m_editButtons->setVisible(true);
    m_editor->setFocus();
}

void MessageBubble::handleEditSave()
{
    const QString text = m_editor->toPlainText();
    handleEditCancel();
    if (!text.trimmed().isEmpty() && text != m_message.content) emit editRequested(m_message.id, text);
}

void MessageBubble::handleEditCancel()
{
    m_editor->setVisible(false);
    m_editButtons->setVisible(false);
    m_body->setVisible(true);
}

void MessageBubble::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QFrame::changeEvent(event);
}

}  // namespace brook
