// MarkdownSegmenter: prose and fenced code blocks (``` and ~~~, with languages), unclosed fences
// while streaming, fences that are not fences.
#include "gui/chat/markdown_segmenter.h"

#include <QtTest>

using namespace brook;
using Kind = MarkdownSegment::Kind;

class TestMarkdownSegmenter : public QObject {
    Q_OBJECT
private slots:
    void splitsProseAndCode()
    {
        const QString md = QStringLiteral(
            "Intro **bold**\n\n```cpp\nint main() {\n  return 0;\n}\n```\nBetween\n~~~\nplain ``` inside\n~~~\nEnd");
        const QList<MarkdownSegment> s = MarkdownSegmenter::split(md);
        QCOMPARE(s.size(), 5);
        QCOMPARE(s[0], (MarkdownSegment{Kind::Prose, QStringLiteral("Intro **bold**\n"), {}}));
        QCOMPARE(s[1],
                 (MarkdownSegment{Kind::Code, QStringLiteral("int main() {\n  return 0;\n}"), QStringLiteral("cpp")}));
        QCOMPARE(s[2], (MarkdownSegment{Kind::Prose, QStringLiteral("Between"), {}}));
        QCOMPARE(s[3], (MarkdownSegment{Kind::Code, QStringLiteral("plain ``` inside"), {}}));
        QCOMPARE(s[4], (MarkdownSegment{Kind::Prose, QStringLiteral("End"), {}}));
    }

    void anUnclosedFenceRunsToTheEnd()
    {
        const QList<MarkdownSegment> s =
            MarkdownSegmenter::split(QStringLiteral("Look:\n```python\nprint(1)\nprint(2"));
        QCOMPARE(s.size(), 2);
        QCOMPARE(s[1].kind, Kind::Code);
        QCOMPARE(s[1].language, QStringLiteral("python"));
        QCOMPARE(s[1].text, QStringLiteral("print(1)\nprint(2"));
    }

    void shortOrIndentedRunsAreNotFences()
    {
        const QList<MarkdownSegment> s =
            MarkdownSegmenter::split(QStringLiteral("use `x` and ``y``\n    ```not a fence"));
        QCOMPARE(s.size(), 1);
        QCOMPARE(s[0].kind, Kind::Prose);
        // A longer closing fence closes; a shorter one does not.
        const QList<MarkdownSegment> t = MarkdownSegmenter::split(QStringLiteral("````\na\n```\nb\n`````\nafter"));
        QCOMPARE(t.size(), 2);
        QCOMPARE(t[0].text, QStringLiteral("a\n```\nb"));
        QCOMPARE(t[1].text, QStringLiteral("after"));
    }

    void emptyInput() { QVERIFY(MarkdownSegmenter::split(QString()).isEmpty()); }
};

QTEST_APPLESS_MAIN(TestMarkdownSegmenter)
#include "test_markdown_segmenter.moc"
