#include "gui/shell/log_view.h"

#include "gui/shell/gui_log_sink.h"

#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTextCharFormat>
#include <QVBoxLayout>

#include <spdlog/common.h>

namespace brook {

LogView::LogView(std::shared_ptr<GuiLogSink> sink, QWidget* parent) : QWidget(parent), m_sink(std::move(sink))
{
    m_text = new QPlainTextEdit(this);
    m_text->setObjectName(QStringLiteral("logText"));
    m_text->setReadOnly(true);
    m_text->setMaximumBlockCount(kMaxLines);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_level = new QComboBox(this);
    m_clear = new QPushButton(this);
    connect(m_level, qOverload<int>(&QComboBox::currentIndexChanged), this, &LogView::handleLevelChanged);
    connect(m_clear, &QPushButton::clicked, m_text, &QPlainTextEdit::clear);

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_level);
    bar->addStretch();
    bar->addWidget(m_clear);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(m_text);
    retranslateUi();

    if (m_sink) append(m_sink->setReceiver(this, "handleNewLines"));
}

LogView::~LogView()
{
    if (m_sink) m_sink->setReceiver(nullptr, nullptr);
}

QString LogView::text() const { return m_text->toPlainText(); }

void LogView::handleNewLines()
{
    if (m_sink) append(m_sink->takeNew());
}

void LogView::append(const QList<LogLine>& lines)
{
    QScrollBar* bar = m_text->verticalScrollBar();
    const bool atBottom = bar->value() >= bar->maximum() - 2;
    QTextCursor cursor(m_text->document());
    cursor.movePosition(QTextCursor::End);
    cursor.beginEditBlock();
    for (const LogLine& line : lines) {
        if (line.level < m_minLevel) continue;
        QTextCharFormat format;
        if (line.level >= spdlog::level::err) format.setForeground(QColor(0xd9, 0x53, 0x4f));
        else if (line.level == spdlog::level::warn) format.setForeground(QColor(0xc0, 0x8a, 0x00));
        if (!m_text->document()->isEmpty()) cursor.insertBlock();
        cursor.insertText(line.text, format);
    }
    cursor.endEditBlock();
    if (atBottom) bar->setValue(bar->maximum());
}

void LogView::handleLevelChanged()
{
    m_minLevel = m_level->currentData().toInt();
    m_text->clear();
    if (m_sink) append(m_sink->history());
}

void LogView::retranslateUi()
{
    const int index = m_level->currentIndex();
    m_level->blockSignals(true);
    m_level->clear();
    m_level->addItem(tr("All messages"), int(spdlog::level::trace));
    m_level->addItem(tr("Info and above"), int(spdlog::level::info));
    m_level->addItem(tr("Warnings and errors"), int(spdlog::level::warn));
    m_level->addItem(tr("Errors only"), int(spdlog::level::err));
    m_level->setCurrentIndex(index < 0 ? 0 : index);
    m_level->blockSignals(false);
    m_clear->setText(tr("Clear"));
}

void LogView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
