// The structured-output setting of a conversation: the schema editor in the settings dialog
// checks as the user types (an unsupported keyword or broken JSON blocks OK and says why; a
// usable schema enables it), the setting reaches the engine's request as a JSON-schema
// structured output, survives the conversation's JSON row, and the "JSON extraction" preset
// turns it on while applying another preset turns it off.
#include "gui/chat/chat_settings.h"
#include "gui/chat/chat_settings_dialog.h"
#include "gui/chat/json_schema_editor.h"
#include "gui/chat/preset_library.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QtTest>

using namespace brook;

class TestStructuredOutputSettings : public QObject {
    Q_OBJECT
private slots:
    void editorValidatesAsYouType()
    {
        ChatSettings settings;
        ChatSettingsDialog dialog(settings, settings, 4096);
        auto* enabled = dialog.findChild<QCheckBox*>(QStringLiteral("structuredOutputEnabled"));
        auto* text = dialog.findChild<QPlainTextEdit*>(QStringLiteral("jsonSchema"));
        auto* status = dialog.findChild<QLabel*>(QStringLiteral("jsonSchemaStatus"));
        auto* buttons = dialog.findChild<QDialogButtonBox*>();
        QVERIFY(enabled && text && status && buttons);
        QPushButton* ok = buttons->button(QDialogButtonBox::Ok);
        QVERIFY(!enabled->isChecked());
        QVERIFY(ok->isEnabled());
        QVERIFY(dialog.settings().jsonSchema.isEmpty());

        enabled->setChecked(true);
        QVERIFY(!ok->isEnabled());  // on, but nothing typed yet
        QTest::keyClicks(text, "{\"type\": \"object\", \"not\": {}}");
        QVERIFY(!ok->isEnabled());
        QVERIFY2(status->text().contains("'not'"), qPrintable(status->text()));

        text->setPlainText("{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}");  // unclosed
        QVERIFY(!ok->isEnabled());
        QVERIFY2(status->text().contains("not valid JSON"), qPrintable(status->text()));
        text->moveCursor(QTextCursor::End);
        QTest::keyClicks(text, "}");
        QVERIFY2(ok->isEnabled(), qPrintable(status->text()));

        const ChatSettings chosen = dialog.settings();
        QCOMPARE(chosen.jsonSchema, text->toPlainText());
        const SamplingParams params = chosen.toSamplingParams();
        QCOMPARE(params.structured.kind, StructuredOutput::Kind::JsonSchema);
        QCOMPARE(QString::fromStdString(params.structured.text), text->toPlainText());

        enabled->setChecked(false);  // off again: free text, whatever is in the box
        QVERIFY(ok->isEnabled());
        QVERIFY(dialog.settings().jsonSchema.isEmpty());
        QVERIFY(!dialog.settings().toSamplingParams().structured.active());
    }

    void settingSurvivesTheConversationRow()
    {
        ChatSettings s;
        s.jsonSchema = QStringLiteral("{\"type\": \"boolean\"}");
        QCOMPARE(ChatSettings::fromJson(s.toJson()), s);
        QVERIFY(ChatSettings::fromJson(QJsonObject{}).jsonSchema.isEmpty());  // old rows: free text
    }

    void presetTurnsItOnAndOthersOff()
    {
        const PresetLibrary library;
        const PromptPreset* extract = library.find(QStringLiteral("json-extract"));
        QVERIFY(extract);
        ChatSettings s;
        extract->applyTo(s);
        QVERIFY(!s.jsonSchema.isEmpty());
        QVERIFY(checkStructuredOutput(s.toSamplingParams().structured));  // the preset's schema compiles
        library.find(QStringLiteral("general"))->applyTo(s);
        QVERIFY(s.jsonSchema.isEmpty());
        // Round trip of the preset itself (user presets are saved as JSON).
        QCOMPARE(PromptPreset::fromJson(extract->toJson()).jsonSchema, extract->jsonSchema);

        // The dialog opens on a conversation that uses the preset with the schema shown and valid.
        ChatSettingsDialog dialog(s, s, 4096);
        ChatSettings withSchema;
        extract->applyTo(withSchema);
        ChatSettingsDialog second(withSchema, withSchema, 4096);
        QVERIFY(second.findChild<QCheckBox*>(QStringLiteral("structuredOutputEnabled"))->isChecked());
        QVERIFY(second.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());
    }
};

QTEST_MAIN(TestStructuredOutputSettings)
#include "test_structured_output_settings.moc"
