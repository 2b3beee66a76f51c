#include "gui/chat/chat_settings_dialog.h"

#include "gui/chat/json_schema_editor.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

#include <limits>

namespace brook {

namespace {

QDoubleSpinBox* makeDouble(QWidget* parent, double min, double max, double step, const char* name)
{
    auto* s = new QDoubleSpinBox(parent);
    s->setObjectName(QLatin1String(name));
    s->setRange(min, max);
    s->setSingleStep(step);
    s->setDecimals(2);
    return s;
}

}  // namespace

ChatSettingsDialog::ChatSettingsDialog(const ChatSettings& settings, const ChatSettings& modelDefaults, int maxModelLen,
                                       QWidget* parent)
    : QDialog(parent), m_original(settings), m_defaults(modelDefaults)
{
    m_systemPrompt = new QPlainTextEdit(this);
    m_systemPrompt->setObjectName(QStringLiteral("systemPrompt"));
    m_systemPrompt->setMinimumHeight(80);
    m_template = new QPlainTextEdit(this);
    m_template->setObjectName(QStringLiteral("inputTemplate"));
    m_template->setMinimumHeight(70);
    m_temperature = makeDouble(this, 0.0, 2.0, 0.05, "temperature");
    m_topP = makeDouble(this, 0.01, 1.0, 0.05, "topP");
    m_topK = new QSpinBox(this);
    m_topK->setRange(0, 1000);
    m_maxTokens = new QSpinBox(this);
    m_maxTokens->setObjectName(QStringLiteral("maxTokens"));
    // Any number can be typed (a narrow range would silently drop the digit that overflows it);
    // past the model's context it is clamped when editing ends, and the note says so.
    m_maxTokensLimit = maxModelLen > 0 ? maxModelLen : 131072;
    m_maxTokens->setRange(1, 100'000'000);
    m_maxTokens->setGroupSeparatorShown(true);
    m_maxTokensNote = new QLabel(this);
    m_maxTokensNote->setObjectName(QStringLiteral("maxTokensNote"));
    m_maxTokensNote->setWordWrap(true);
    m_maxTokensNote->setForegroundRole(QPalette::PlaceholderText);
    connect(m_maxTokens, &QSpinBox::editingFinished, this, &ChatSettingsDialog::clampMaxTokens);
    m_repetition = makeDouble(this, 0.5, 2.0, 0.05, "repetitionPenalty");
    m_presence = makeDouble(this, -2.0, 2.0, 0.1, "presencePenalty");
    m_frequency = makeDouble(this, -2.0, 2.0, 0.1, "frequencyPenalty");
    m_seed = new QSpinBox(this);
    m_seed->setRange(-1, std::numeric_limits<int>::max());
    m_schema = new JsonSchemaEditor(this);

    m_form = new QFormLayout;
    for (QWidget* field :
         std::initializer_list<QWidget*>{m_systemPrompt, m_template, m_temperature, m_topP, m_topK, m_maxTokens,
                                         m_repetition, m_presence, m_frequency, m_seed, m_schema}) {
        auto* label = new QLabel(this);
        label->setBuddy(field);
        m_labels.append(label);
        m_form->addRow(label, field);
    }

    m_form->insertRow(6, QString(), m_maxTokensNote);  // under Max tokens

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::Reset, this);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_buttons->button(QDialogButtonBox::Reset), &QPushButton::clicked, this, &ChatSettingsDialog::handleReset);
    connect(m_schema, &JsonSchemaEditor::validityChanged, m_buttons->button(QDialogButtonBox::Ok),
            &QPushButton::setEnabled);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(m_form);
    layout->addWidget(m_buttons);
    load(settings);
    retranslateUi();
    resize(520, sizeHint().height());
}

void ChatSettingsDialog::load(const ChatSettings& s)
{
    m_systemPrompt->setPlainText(s.systemPrompt);
    m_template->setPlainText(s.inputTemplate);
    m_temperature->setValue(s.temperature);
    m_topP->setValue(s.topP);
    m_topK->setValue(s.topK);
    m_maxTokens->setValue(s.maxTokens);
    m_repetition->setValue(s.repetitionPenalty);
    m_presence->setValue(s.presencePenalty);
    m_frequency->setValue(s.frequencyPenalty);
    m_seed->setValue(int(std::min<qint64>(s.seed, std::numeric_limits<int>::max())));
    m_schema->setSchema(s.jsonSchema);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(m_schema->isValid());
}

ChatSettings ChatSettingsDialog::settings() const
{
    ChatSettings s = m_original;
    s.systemPrompt = m_systemPrompt->toPlainText();
    s.inputTemplate = m_template->toPlainText();
    s.temperature = m_temperature->value();
    s.topP = m_topP->value();
    s.topK = m_topK->value();
    s.maxTokens = std::min(m_maxTokens->value(), m_maxTokensLimit);
    s.repetitionPenalty = m_repetition->value();
    s.presencePenalty = m_presence->value();
    s.frequencyPenalty = m_frequency->value();
    s.seed = m_seed->value();
    s.jsonSchema = m_schema->schema();
    return s;
}

void ChatSettingsDialog::clampMaxTokens()
{
    m_maxTokensClamped = m_maxTokens->value() > m_maxTokensLimit;
    if (m_maxTokensClamped) m_maxTokens->setValue(m_maxTokensLimit);
    updateMaxTokensNote();
}

void ChatSettingsDialog::updateMaxTokensNote()
{
    m_maxTokensNote->setText(
        m_maxTokensClamped ? tr("Clamped to %L1: the model's context holds %L1 tokens, prompt and reply together.")
                                 .arg(m_maxTokensLimit)
                           : tr("At most %L1, the model's context (prompt and reply share it).").arg(m_maxTokensLimit));
}

void ChatSettingsDialog::handleReset()
{
    // Sampling back to the model's defaults; the prompts are the user's and stay.
    ChatSettings s = m_defaults;
    s.systemPrompt = m_systemPrompt->toPlainText();
    s.inputTemplate = m_template->toPlainText();
    s.presetName = m_original.presetName;
    s.jsonSchema = m_schema->schema();
    load(s);
}

void ChatSettingsDialog::retranslateUi()
{
    setWindowTitle(tr("Conversation settings"));
    const QStringList labels = {tr("System prompt:"),
                                tr("Input template:"),
                                tr("Temperature:"),
                                tr("Top-p:"),
                                tr("Top-k:"),
                                tr("Max tokens:"),
                                tr("Repetition penalty:"),
                                tr("Presence penalty:"),
                                tr("Frequency penalty:"),
                                tr("Seed:"),
                                tr("Structured output:")};
    for (int row = 0; row < labels.size() && row < m_labels.size(); ++row) m_labels[row]->setText(labels[row]);
    m_systemPrompt->setPlaceholderText(tr("Optional: how the assistant should behave"));
    m_template->setPlaceholderText(tr("Optional: wraps each message; {input} marks where your text goes"));
    m_topK->setSpecialValueText(tr("off"));
    updateMaxTokensNote();
    m_seed->setSpecialValueText(tr("random"));
    m_buttons->button(QDialogButtonBox::Reset)->setText(tr("Model defaults"));
    m_buttons->button(QDialogButtonBox::Reset)
        ->setToolTip(tr("Sampling values from the model's generation_config.json"));
}

void ChatSettingsDialog::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QDialog::changeEvent(event);
}

}  // namespace brook
