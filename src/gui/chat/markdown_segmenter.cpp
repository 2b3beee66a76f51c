#include "gui/chat/markdown_segmenter.h"

#include <QStringList>

namespace brook {

namespace {

// A fence line: up to 3 spaces, then 3+ backticks or tildes. Returns the fence (e.g. "```") or empty.
QString fenceOf(const QString& line, QString* info)
{
    int i = 0;
    while (i < line.size() && i < 3 && line[i] == QLatin1Char(' ')) ++i;
    if (i >= line.size()) return {};
    const QChar c = line[i];
    if (c != QLatin1Char('`') && c != QLatin1Char('~')) return {};
    int j = i;
    while (j < line.size() && line[j] == c) ++j;
    if (j - i < 3) return {};
    if (info) *info = line.mid(j).trimmed();
    return line.mid(i, j - i);
}

}  // namespace

QList<MarkdownSegment> MarkdownSegmenter::split(const QString& markdown)
{
    QList<MarkdownSegment> out;
    QStringList prose, code;
    QString openFence, language;
    auto flushProse = [&] {
        const QString text = prose.join(QLatin1Char('\n'));
        if (!text.trimmed().isEmpty()) out.append({MarkdownSegment::Kind::Prose, text, {}});
        prose.clear();
    };
    const QStringList lines = markdown.split(QLatin1Char('\n'));
    for (const QString& line : lines) {
        if (openFence.isEmpty()) {
            QString info;
            const QString fence = fenceOf(line, &info);
            if (!fence.isEmpty()) {
                flushProse();
                openFence = fence;
                language = info.section(QLatin1Char(' '), 0, 0);
            } else {
                prose << line;
            }
        } else {
            QString info;
            const QString fence = fenceOf(line, &info);
            // A closing fence: same character, at least as long, nothing after it.
            if (!fence.isEmpty() && fence[0] == openFence[0] && fence.size() >= openFence.size() && info.isEmpty()) {
                out.append({MarkdownSegment::Kind::Code, code.join(QLatin1Char('\n')), language});
                code.clear();
                openFence.clear();
            } else {
                code << line;
            }
        }
    }
    if (!openFence.isEmpty()) out.append({MarkdownSegment::Kind::Code, code.join(QLatin1Char('\n')), language});
    flushProse();
    return out;
}

}  // namespace brook
