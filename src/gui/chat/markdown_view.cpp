#include "gui/chat/markdown_view.h"

#include "gui/chat/auto_height_browser.h"
#include "gui/chat/code_block_view.h"
#include "gui/chat/markdown_segmenter.h"

#include <QTextFrame>
#include <QTextTable>
#include <QVBoxLayout>

namespace brook {

namespace {

// QTextDocument draws Markdown tables with no padding; give their cells room to breathe.
void styleTables(QTextFrame* frame)
{
    for (QTextFrame* child : frame->childFrames()) {
        if (auto* table = qobject_cast<QTextTable*>(child)) {
            QTextTableFormat format = table->format();
            format.setCellPadding(5);
            format.setCellSpacing(0);
            format.setBorder(1);
            format.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
            format.setBorderBrush(QColor(128, 128, 128, 110));
            format.setBorderCollapse(true);
            table->setFormat(format);
        }
        styleTables(child);
    }
}

// Models write plain text with single newlines between lines; Markdown would join them into one
// paragraph. A hard break ("  " at the line end) keeps them apart, and is ignored where Markdown
// does not allow one (end of a heading, list item or table row).
QString keepLineBreaks(const QString& prose)
{
    QStringList lines = prose.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i + 1 < lines.size(); ++i)
        if (!lines[i].trimmed().isEmpty() && !lines[i + 1].trimmed().isEmpty() && !lines[i].endsWith(QLatin1Char('\\')))
            lines[i] += QLatin1String("  ");
    return lines.join(QLatin1Char('\n'));
}

}  // namespace

MarkdownView::MarkdownView(QWidget* parent) : QWidget(parent)
{
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->setSpacing(6);
}

void MarkdownView::clear()
{
    while (QLayoutItem* item = m_layout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    m_streaming = nullptr;
}

void MarkdownView::setMarkdown(const QString& markdown)
{
    clear();
    m_text = markdown;
    for (const MarkdownSegment& s : MarkdownSegmenter::split(markdown)) {
        if (s.kind == MarkdownSegment::Kind::Code) {
            auto* code = new CodeBlockView(this);
            code->setCode(s.text, s.language);
            m_layout->addWidget(code);
        } else {
            auto* prose = new AutoHeightBrowser(this);
            prose->setMarkdown(keepLineBreaks(s.text));
            styleTables(prose->document()->rootFrame());
            m_layout->addWidget(prose);
        }
    }
}

void MarkdownView::setStreamingText(const QString& text)
{
    if (!m_streaming) {
        clear();
        m_streaming = new AutoHeightBrowser(this);
        m_layout->addWidget(m_streaming);
    }
    m_text = text;
    m_streaming->setPlainText(text);
}

QString MarkdownView::renderedText() const
{
    QStringList parts;
    for (int i = 0; i < m_layout->count(); ++i) {
        QWidget* w = m_layout->itemAt(i)->widget();
        if (auto* browser = qobject_cast<AutoHeightBrowser*>(w)) parts << browser->toPlainText();
        else if (auto* code = qobject_cast<CodeBlockView*>(w)) parts << code->code();
    }
    return parts.join(QLatin1Char('\n'));
}

}  // namespace brook
