// Prompt presets: the shipped ERNIE templates are exactly the text and expand as written;
// keyword choice; add/update/remove and JSON round trips; applying a preset to a conversation.
#include "gui/shell/app_settings.h"
#include "gui/chat/preset_library.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace brook;

class TestPromptPresets : public QObject {
    Q_OBJECT
private slots:
    void builtinTemplatesExpandAsWritten()
    {
        const PresetLibrary library;
        const PromptPreset* writing = library.find(QStringLiteral("writing"));
        const PromptPreset* summary = library.find(QStringLiteral("summary"));
        QVERIFY(writing && summary);
        const QString input = QStringLiteral("写一篇关于春天的短文");
        QCOMPARE(
            writing->expand(input),
            QStringLiteral(
                "【任务】写一篇关于春天的短文\n【要求】语言简洁专业，段落清晰，不使用markdown格式，直接输出正文。\n【输出】"));
        QCOMPARE(
            summary->expand(QStringLiteral("总结这段话：ABC")),
            QStringLiteral("【任务】总结这段话：ABC\n【要求】用3句话以内完成，每句不超过25字，不加序号。\n【输出】"));
        // No template: the text as typed; several markers: each replaced.
        QCOMPARE(library.find(QStringLiteral("general"))->expand(input), input);
        PromptPreset twice;
        twice.inputTemplate = QStringLiteral("<{input}|{input}>");
        QCOMPARE(twice.expand(QStringLiteral("x{y}")), QStringLiteral("<x{y}|x{y}>"));
    }

    void keywordsPickTheMostSpecificPreset()
    {
        const PresetLibrary library;
        auto pick = [&](const QString& text) {
            auto p = library.chooseFor(text);
            return p ? p->id : QString();
        };
        QCOMPARE(pick(QStringLiteral("帮我写一首关于秋天的诗")), QStringLiteral("writing"));
        QCOMPARE(pick(QStringLiteral("生成一段产品介绍")), QStringLiteral("writing"));
        QCOMPARE(pick(QStringLiteral("创作一个故事")), QStringLiteral("writing"));
        QCOMPARE(pick(QStringLiteral("请总结这篇文章")), QStringLiteral("summary"));
        QCOMPARE(pick(QStringLiteral("概括一下要点")), QStringLiteral("summary"));
        QCOMPARE(pick(QStringLiteral("写一个总结")), QStringLiteral("summary"));  // the longer keyword wins
        QCOMPARE(pick(QStringLiteral("今天天气怎么样？")), QString());
        QCOMPARE(pick(QStringLiteral("hello")), QString());
    }

    void addUpdateRemoveAndRoundTrip()
    {
        PresetLibrary library;
        PromptPreset mine;
        mine.name = QStringLiteral("Translate EN");
        mine.systemPrompt = QStringLiteral("You translate.");
        mine.inputTemplate = QStringLiteral("Translate into English:\n{input}");
        mine.keywords = {QStringLiteral("翻译")};
        mine.temperature = 0.2;
        mine.maxTokens = 300;
        const QString id = library.add(mine);
        QCOMPARE(id, QStringLiteral("translate-en"));
        QCOMPARE(library.add(mine), QStringLiteral("translate-en-2"));  // ids stay unique
        QVERIFY(library.remove(QStringLiteral("translate-en-2")));
        QCOMPARE(library.chooseFor(QStringLiteral("请翻译这句话"))->id, id);

        PromptPreset edited = *library.find(id);
        edited.topP = 0.5;
        edited.keywords << QStringLiteral("translate");
        QVERIFY(library.update(edited));
        QVERIFY(library.remove(QStringLiteral("writing")));
        QVERIFY(!library.find(QStringLiteral("writing")));

        const PresetLibrary back = PresetLibrary::fromJson(library.toJson());
        QCOMPARE(back.presets().size(), library.presets().size());
        const PromptPreset* read = back.find(id);
        QVERIFY(read);
        QCOMPARE(read->inputTemplate, mine.inputTemplate);
        QCOMPARE(read->keywords, (QStringList{QStringLiteral("翻译"), QStringLiteral("translate")}));
        QCOMPARE(*read->temperature, 0.2);
        QCOMPARE(*read->topP, 0.5);
        QCOMPARE(*read->maxTokens, 300);
        QVERIFY(!read->topK.has_value());
        QVERIFY(!read->builtin);

        PresetLibrary restored = back;
        restored.restoreBuiltins();
        QVERIFY(restored.find(QStringLiteral("writing")));
        QCOMPARE(PresetLibrary::fromJson(QJsonArray()).presets().size(), PresetLibrary::builtins().size());
    }

    void applyingSetsPromptTemplateAndOverridesOnly()
    {
        ChatSettings s;
        s.temperature = 1.1;
        s.topK = 40;
        s.maxTokens = 2000;
        PresetLibrary().find(QStringLiteral("summary"))->applyTo(s);
        QCOMPARE(s.presetName, QStringLiteral("summary"));
        QCOMPARE(s.temperature, 0.3);
        QCOMPARE(s.maxTokens, 256);
        QCOMPARE(s.topK, 40);  // not set by the preset
        QCOMPARE(s.expandInput(QStringLiteral("概括：X")),
                 QStringLiteral("【任务】概括：X\n【要求】用3句话以内完成，每句不超过25字，不加序号。\n【输出】"));
    }

    void presetsPersistInSettings()
    {
        QTemporaryDir dir;
        const QString ini = dir.filePath("brook.ini");
        PresetLibrary library;
        PromptPreset p;
        p.name = QStringLiteral("Poem");
        p.inputTemplate = QStringLiteral("诗：{input}");
        library.add(p);
        {
            AppSettings settings(ini);
            settings.setPresets(library);
            settings.setAutoPreset(true);
            settings.sync();
        }
        AppSettings settings(ini);
        QVERIFY(settings.autoPreset());
        QCOMPARE(settings.presets().toJson(), library.toJson());
    }
};

QTEST_APPLESS_MAIN(TestPromptPresets)
#include "test_prompt_presets.moc"
