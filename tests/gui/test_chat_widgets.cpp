// Message widgets without an engine: Markdown is rendered (headings, lists, tables) with each code
// block in its own view whose Copy button puts exactly the code on the clipboard; streaming text
// is shown plain; bubbles show the per-message numbers, the branch switcher and the right actions;
// the settings dialog round-trips every field; the vector icons draw at high DPI.
#include "gui/chat/chat_area.h"
#include "gui/chat/chat_generator.h"
#include "gui/chat/chat_pane.h"
#include "gui/chat/chat_session.h"
#include "gui/chat/chat_settings_dialog.h"
#include "gui/chat/history_store.h"
#include "gui/chat/code_block_view.h"
#include "gui/chat/markdown_view.h"
#include "gui/chat/message_bubble.h"
#include "gui/chat/preset_editor_dialog.h"
#include "gui/shell/theme_manager.h"
#include "gui/shell/vector_icon_engine.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBrowser>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtTest>

using namespace brook;

class TestChatWidgets : public QObject {
    Q_OBJECT
private slots:
    void markdownIsRenderedAndCodeBlocksCopyExactly()
    {
        MarkdownView view;
        view.resize(600, 400);
        const QString code = QStringLiteral("for (int i = 0; i < 3; ++i) {\n    puts(\"hi\");\n}");
        view.setMarkdown(QStringLiteral("# Title\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```c\n") + code +
                         QStringLiteral("\n```\n\nAfter **bold**."));
        view.show();
        const QList<CodeBlockView*> blocks = view.findChildren<CodeBlockView*>();
        QCOMPARE(blocks.size(), 1);
        QCOMPARE(blocks[0]->code(), code);
        const QString rendered = view.renderedText();
        QVERIFY(rendered.contains(QStringLiteral("Title")));
        QVERIFY(!rendered.contains(QStringLiteral("# Title")));  // a heading, not literal text
        QVERIFY(!rendered.contains(QStringLiteral("**bold**")));
        QVERIFY(!rendered.contains(QStringLiteral("|---|")));  // a table
        QTextBrowser* prose = view.findChildren<QTextBrowser*>().first();
        QVERIFY(prose->document()->toHtml().contains(QStringLiteral("<table")));

        QApplication::clipboard()->clear();
        QSignalSpy copied(blocks[0], &CodeBlockView::copied);
        QTest::mouseClick(blocks[0]->findChild<QToolButton*>(QStringLiteral("copyCode")), Qt::LeftButton);
        QCOMPARE(copied.count(), 1);
        QCOMPARE(QApplication::clipboard()->text(), code);
    }

    void singleNewlinesOfPlainTextRepliesAreKept()
    {
        MarkdownView view;
        view.setMarkdown(QStringLiteral("春天来临，万物复苏。\n花开燕归，孩童嬉戏。\n\n- a\n- b"));
        const QString rendered = view.renderedText();
        QVERIFY2(rendered.contains(QStringLiteral("万物复苏。\n花开燕归")), qPrintable(rendered));
        QVERIFY(!rendered.contains(QStringLiteral("- a")));  // still Markdown: a list
    }

    void presetEditorAddsEditsAndDeletes()
    {
        PresetEditorDialog dialog{PresetLibrary()};
        auto* list = dialog.findChild<QListWidget*>(QStringLiteral("presetList"));
        const int before = list->count();
        dialog.addPreset();
        QCOMPARE(list->count(), before + 1);
        dialog.findChild<QLineEdit*>(QStringLiteral("presetName"))->setText(QStringLiteral("Poems"));
        dialog.findChild<QPlainTextEdit*>(QStringLiteral("presetTemplate"))
            ->setPlainText(QStringLiteral("写一首诗：{input}"));
        dialog.findChild<QLineEdit*>(QStringLiteral("presetKeywords"))->setText(QStringLiteral("诗，poem"));
        const PresetLibrary& edited = dialog.library();
        const auto chosen = edited.chooseFor(QStringLiteral("a poem please"));
        QVERIFY(chosen.has_value());
        QCOMPARE(chosen->name, QStringLiteral("Poems"));
        QCOMPARE(chosen->expand(QStringLiteral("moon")), QStringLiteral("写一首诗：moon"));
        QCOMPARE(chosen->keywords, (QStringList{QStringLiteral("诗"), QStringLiteral("poem")}));
        list->setCurrentRow(0);
        dialog.deleteCurrent();
        QCOMPARE(list->count(), before);
        QVERIFY(!dialog.library().find(QStringLiteral("general")));
    }

    void streamingTextIsPlainAndCheapToExtend()
    {
        MarkdownView view;
        view.setStreamingText(QStringLiteral("# not yet a heading"));
        QCOMPARE(view.renderedText(), QStringLiteral("# not yet a heading"));
        view.setStreamingText(QStringLiteral("# not yet a heading\n```"));
        QCOMPARE(view.findChildren<CodeBlockView*>().size(), 0);
    }

    void assistantBubbleShowsNumbersBranchesAndActions()
    {
        MessageRecord m;
        m.id = 42;
        m.role = QStringLiteral("assistant");
        m.content = QStringLiteral("Answer");
        m.outputTokens = 128;
        m.promptTokens = 1500;
        m.cachedTokens = 1488;
        m.ttftSeconds = 0.0456;
        m.tokensPerSecond = 87.25;
        m.finishReason = QStringLiteral("length");
        MessageBubble bubble(m, 1, 3);
        bubble.show();
        const QString stats = bubble.findChild<QLabel*>(QStringLiteral("messageStats"))->text();
        QVERIFY2(stats.contains(QStringLiteral("128 tokens")) && stats.contains(QStringLiteral("0.05 s")) &&
                     stats.contains(QStringLiteral("87.3 tokens/s")) && stats.contains(QStringLiteral("max tokens")),
                 qPrintable(stats));
        const QString cached = QStringLiteral("%L1 of %L2 prompt tokens cached").arg(1488).arg(1500);
        QVERIFY2(stats.contains(cached), qPrintable(stats));
        QVERIFY(bubble.findChild<QToolButton*>(QStringLiteral("regenerateMessage"))->isVisible());
        QVERIFY(!bubble.findChild<QToolButton*>(QStringLiteral("editMessage"))->isVisible());
        auto* previous = bubble.findChild<QToolButton*>(QStringLiteral("previousBranch"));
        auto* next = bubble.findChild<QToolButton*>(QStringLiteral("nextBranch"));
        QVERIFY(previous->isVisible() && previous->isEnabled() && next->isEnabled());
        QSignalSpy branch(&bubble, &MessageBubble::branchRequested);
        QSignalSpy regenerate(&bubble, &MessageBubble::regenerateRequested);
        QTest::mouseClick(next, Qt::LeftButton);
        QTest::mouseClick(bubble.findChild<QToolButton*>(QStringLiteral("regenerateMessage")), Qt::LeftButton);
        QCOMPARE(branch.count(), 1);
        QCOMPARE(branch[0][0].toLongLong(), 42);
        QCOMPARE(branch[0][1].toInt(), 1);
        QCOMPARE(regenerate.count(), 1);
        bubble.setActionsEnabled(false);  // while generating
        QVERIFY(!next->isEnabled());
        QVERIFY(!bubble.findChild<QToolButton*>(QStringLiteral("regenerateMessage"))->isEnabled());
        QTest::mouseClick(bubble.findChild<QToolButton*>(QStringLiteral("copyMessage")), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("Answer"));
    }

    void aReplyEndedByAFullContextSaysSo()
    {
        MessageRecord m;
        m.id = 3;
        m.role = QStringLiteral("assistant");
        m.content = QStringLiteral("long answer");
        m.promptTokens = 96;
        m.outputTokens = 4000;
        m.finishReason = QStringLiteral("context");  // ChatSession's name for a length finish at the context's end
        MessageBubble bubble(m, 0, 1);
        const QString stats = bubble.findChild<QLabel*>(QStringLiteral("messageStats"))->text();
        QVERIFY2(stats.contains(QRegularExpression(QStringLiteral("context full at 4,?096 tokens"))),
                 qPrintable(stats));
        QVERIFY(!stats.contains(QStringLiteral("max tokens")));
    }

    void userBubbleEditsInPlace()
    {
        MessageRecord m;
        m.id = 7;
        m.role = QStringLiteral("user");
        m.content = QStringLiteral("original *text*");
        MessageBubble bubble(m, 0, 1);
        bubble.show();
        QVERIFY(!bubble.findChild<QToolButton*>(QStringLiteral("previousBranch"))->isVisible());  // no siblings
        QCOMPARE(bubble.renderedText(), QStringLiteral("original *text*"));  // user text is shown as typed
        QSignalSpy edit(&bubble, &MessageBubble::editRequested);
        QTest::mouseClick(bubble.findChild<QToolButton*>(QStringLiteral("editMessage")), Qt::LeftButton);
        auto* editor = bubble.findChild<QPlainTextEdit*>(QStringLiteral("messageEditor"));
        QVERIFY(editor->isVisible());
        QCOMPARE(editor->toPlainText(), m.content);
        editor->setPlainText(QStringLiteral("changed"));
        QTest::mouseClick(bubble.findChild<QPushButton*>(QStringLiteral("saveEdit")), Qt::LeftButton);
        QCOMPARE(edit.count(), 1);
        QCOMPARE(edit[0][1].toString(), QStringLiteral("changed"));
        QVERIFY(!editor->isVisible());
    }

    void settingsDialogRoundTripsAndResetsSampling()
    {
        ChatSettings s;
        s.systemPrompt = QStringLiteral("sys");
        s.inputTemplate = QStringLiteral("T{input}");
        s.temperature = 0.35;
        s.topP = 0.65;
        s.topK = 12;
        s.maxTokens = 321;
        s.repetitionPenalty = 1.2;
        s.presencePenalty = -0.5;
        s.frequencyPenalty = 0.7;
        s.seed = 99;
        s.presetName = QStringLiteral("mine");
        ChatSettings defaults;
        defaults.temperature = 0.8;
        defaults.maxTokens = 1000;
        ChatSettingsDialog dialog(s, defaults, 4096);
        QCOMPARE(dialog.settings(), s);
        dialog.findChild<QDoubleSpinBox*>(QStringLiteral("temperature"))->setValue(1.5);
        QCOMPARE(dialog.settings().temperature, 1.5);
        QTest::mouseClick(dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Reset), Qt::LeftButton);
        const ChatSettings reset = dialog.settings();
        QCOMPARE(reset.temperature, 0.8);
        QCOMPARE(reset.maxTokens, 1000);
        QCOMPARE(reset.systemPrompt, QStringLiteral("sys"));  // the prompts are the user's
        QCOMPARE(reset.inputTemplate, QStringLiteral("T{input}"));
        // 100000 typed into Max tokens: clamped to the context, visibly, not silently cut to 1000.
        auto* maxTokens = dialog.findChild<QSpinBox*>(QStringLiteral("maxTokens"));
        auto* note = dialog.findChild<QLabel*>(QStringLiteral("maxTokensNote"));
        QVERIFY(note->text().contains(QRegularExpression(QStringLiteral("4,?096"))));
        maxTokens->selectAll();
        QTest::keyClicks(maxTokens, QStringLiteral("100000"));
        QCOMPARE(maxTokens->value(), 100000);
        QTest::keyClick(maxTokens, Qt::Key_Return);  // editing ends
        QCOMPARE(maxTokens->value(), 4096);
        QCOMPARE(dialog.settings().maxTokens, 4096);
        QVERIFY2(note->text().contains(QStringLiteral("Clamped")), qPrintable(note->text()));
    }

    void bubblesRestyleOnAThemeSwitch()
    {
        // Bubbles made under the dark theme, then light and back: text, tint and icons follow.
        ThemeManager theme;
        theme.apply(QStringLiteral("dark"));
        QWidget window;
        auto* layout = new QVBoxLayout(&window);
        QList<MessageBubble*> bubbles;
        for (const char* role : {"user", "assistant"}) {
            MessageRecord m;
            m.id = role[0] == 'u' ? 5 : 6;
            m.role = QString::fromLatin1(role);
            m.content = QStringLiteral("text");
            bubbles << new MessageBubble(m, 0, 1, &window);
            layout->addWidget(bubbles.last());
        }
        window.resize(500, 300);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto darkestIconPixel = [](MessageBubble* b) {
            const QImage icon = b->findChild<QToolButton*>(QStringLiteral("copyMessage"))->grab().toImage();
            int darkest = 255;
            for (int y = 0; y < icon.height(); ++y)
                for (int x = 0; x < icon.width(); ++x)
                    darkest = std::min(darkest, QColor(icon.pixel(x, y)).lightness());
            return darkest;
        };
        for (const QString& name : {QStringLiteral("light"), QStringLiteral("dark")}) {
            theme.apply(name);
            QCoreApplication::processEvents();
            const bool light = name == QLatin1String("light");
            for (MessageBubble* b : bubbles) {
                const QImage image = b->grab().toImage();
                const int background = QColor(image.pixel(image.width() / 2, image.height() - 3)).lightness();
                const int text = b->findChildren<QLabel*>().first()->palette().color(QPalette::WindowText).lightness();
                QVERIFY2(light ? background > 180 && text < 80 : background < 90 && text > 180,
                         qPrintable(QStringLiteral("%1 %2: background %3, text %4")
                                        .arg(name, b->objectName())
                                        .arg(background)
                                        .arg(text)));
                if (light) QVERIFY(darkestIconPixel(b) < 100);  // dark icons on the light tint
            }
        }
        theme.apply(QStringLiteral("system"));
    }

    void narrowPanesWrapAndTwoSidesSplitEvenly()
    {
        // A reply with long numbers in a 300 px pane: the numbers wrap, the actions stay inside.
        MessageRecord m;
        m.id = 9;
        m.role = QStringLiteral("assistant");
        m.content = QStringLiteral("answer");
        m.promptTokens = 120;
        m.outputTokens = 12345;
        m.ttftSeconds = 1.25;
        m.tokensPerSecond = 12.5;
        m.finishReason = QStringLiteral("context");
        QWidget host;
        auto* layout = new QVBoxLayout(&host);
        auto* bubble = new MessageBubble(m, 1, 2, &host);
        layout->addWidget(bubble);
        host.resize(300, 400);
        host.show();
        QVERIFY(QTest::qWaitForWindowExposed(&host));
        QVERIFY2(bubble->minimumSizeHint().width() <= 300,
                 qPrintable(QString::number(bubble->minimumSizeHint().width())));
        QVERIFY(bubble->width() <= 300);
        for (QToolButton* b : bubble->findChildren<QToolButton*>())
            if (b->isVisible()) QVERIFY2(b->geometry().right() < bubble->width(), qPrintable(b->objectName()));
        auto* stats = bubble->findChild<QLabel*>(QStringLiteral("messageStats"));
        QVERIFY(stats->height() > stats->fontMetrics().height() * 1.5);  // wrapped onto a second line

        // A pane with a long title and the presets does not ask for more than a narrow side.
        HistoryStore store;
        ChatGenerator generator;
        PresetLibrary presets;
        auto* session = new ChatSession(store, generator, 0);
        session->rename(QStringLiteral("A conversation title long enough to widen any header it is put in"));
        auto* left = new ChatPane(session, &presets);
        QVERIFY2(left->minimumSizeHint().width() <= 360, qPrintable(QString::number(left->minimumSizeHint().width())));

        // Two sides start with half the width each.
        ChatArea area;
        area.resize(1000, 600);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        area.addPane(left);
        area.addPane(new ChatPane(new ChatSession(store, generator, 0), &presets), true);
        QCOMPARE(area.sideCount(), 2);
        const QList<int> sizes = area.findChild<QSplitter*>()->sizes();
        QVERIFY2(std::abs(sizes[0] - sizes[1]) <= 8,
                 qPrintable(QStringLiteral("%1 vs %2").arg(sizes[0]).arg(sizes[1])));
    }

    void iconsDrawAtHighDpi()
    {
        const QIcon icon = VectorIconEngine::icon(IconShape::Send);
        const QPixmap pixmap = icon.pixmap(QSize(24, 24), 2.0);
        QCOMPARE(pixmap.devicePixelRatio(), 2.0);
        QCOMPARE(pixmap.size(), QSize(48, 48));
        const QImage image = pixmap.toImage();
        int inked = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x) inked += qAlpha(image.pixel(x, y)) > 0;
        QVERIFY(inked > 200);  // something was drawn, at full resolution
    }
};

QTEST_MAIN(TestChatWidgets)
#include "test_chat_widgets.moc"
