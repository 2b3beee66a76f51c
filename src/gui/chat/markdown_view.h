// MarkdownView: a message body. Finished messages are rendered as Markdown (QTextDocument's
// CommonMark + GitHub tables), with fenced code blocks split out into CodeBlockViews that have a
// Copy button. While a reply streams it shows plain text, which is cheap to update.
#pragma once

#include <QWidget>

class QVBoxLayout;

namespace brook {

class AutoHeightBrowser;

class MarkdownView : public QWidget {
    Q_OBJECT
public:
    explicit MarkdownView(QWidget* parent = nullptr);

    void setMarkdown(const QString& markdown);
    void setStreamingText(const QString& text);  // plain text; cheap to call repeatedly
    QString text() const { return m_text; }
    QString renderedText() const;  // what the user sees, as plain text (tests)

private:
    void clear();

    QString m_text;
    QVBoxLayout* m_layout;
    AutoHeightBrowser* m_streaming = nullptr;
};

}  // namespace brook
