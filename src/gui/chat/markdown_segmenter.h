// MarkdownSegmenter: splits a message into prose and fenced code blocks (``` or ~~~), so prose is
// rendered as Markdown and each code block gets its own monospace view with a Copy button.
// An unclosed fence (a reply still streaming, or cut by max tokens) runs to the end. Stateless.
#pragma once

#include <QList>
#include <QString>

namespace brook {

struct MarkdownSegment {
    enum class Kind { Prose, Code };
    Kind kind = Kind::Prose;
    QString text;      // prose: Markdown; code: the code, without fences
    QString language;  // code: the fence's info string ("cpp"), may be empty
    bool operator==(const MarkdownSegment&) const = default;
};

class MarkdownSegmenter {
public:
    static QList<MarkdownSegment> split(const QString& markdown);
};

}  // namespace brook
