// ChatSettingsDialog: edits one conversation's system prompt, input template and sampling
// (temperature, top-p, top-k, max tokens, penalties, seed) and structured output (a JSON schema
// the replies follow, checked as it is typed: OK waits for a usable one); "Reset" restores the
// model's generation_config defaults.
#pragma once

#include "gui/chat/chat_settings.h"

#include <QDialog>

class QDialogButtonBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QPlainTextEdit;
class QSpinBox;

namespace brook {

class JsonSchemaEditor;

class ChatSettingsDialog : public QDialog {
    Q_OBJECT
public:
    ChatSettingsDialog(const ChatSettings& settings, const ChatSettings& modelDefaults, int maxModelLen,
                       QWidget* parent = nullptr);

    ChatSettings settings() const;

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handleReset();
    void clampMaxTokens();

private:
    void load(const ChatSettings& settings);
    void retranslateUi();
    void updateMaxTokensNote();

    ChatSettings m_original;
    ChatSettings m_defaults;
    QFormLayout* m_form;
    QList<QLabel*> m_labels;
    QPlainTextEdit* m_systemPrompt;
    QPlainTextEdit* m_template;
    QDoubleSpinBox* m_temperature;
    QDoubleSpinBox* m_topP;
    QSpinBox* m_topK;
    QSpinBox* m_maxTokens;
    QLabel* m_maxTokensNote;
    int m_maxTokensLimit = 0;  // the model's context
    bool m_maxTokensClamped = false;
    QDoubleSpinBox* m_repetition;
    QDoubleSpinBox* m_presence;
    QDoubleSpinBox* m_frequency;
    QSpinBox* m_seed;
    JsonSchemaEditor* m_schema;
    QDialogButtonBox* m_buttons;
};

}  // namespace brook
