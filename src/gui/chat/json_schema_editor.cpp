#include "gui/chat/json_schema_editor.h"

#include "engine/structured_output.h"

#include <QCheckBox>
#include <QEvent>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace brook {

JsonSchemaEditor::JsonSchemaEditor(QWidget* parent) : QWidget(parent)
{
    m_enabled = new QCheckBox(this);
    m_enabled->setObjectName(QStringLiteral("structuredOutputEnabled"));
    m_text = new QPlainTextEdit(this);
    m_text->setObjectName(QStringLiteral("jsonSchema"));
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setMinimumHeight(90);
    m_text->setTabChangesFocus(true);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("jsonSchemaStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_enabled);
    layout->addWidget(m_text);
    layout->addWidget(m_status);
    connect(m_enabled, &QCheckBox::toggled, this, [this](bool on) {
        m_text->setEnabled(on);
        validate();
    });
    connect(m_text, &QPlainTextEdit::textChanged, this, &JsonSchemaEditor::validate);
    m_text->setEnabled(false);
    retranslateUi();
    validate();
}

void JsonSchemaEditor::setSchema(const QString& schema)
{
    m_enabled->setChecked(!schema.trimmed().isEmpty());
    m_text->setPlainText(schema);
    m_text->setEnabled(m_enabled->isChecked());
    validate();
}

QString JsonSchemaEditor::schema() const { return m_enabled->isChecked() ? m_text->toPlainText() : QString(); }

void JsonSchemaEditor::validate()
{
    bool valid = true;
    m_error.clear();
    if (m_enabled->isChecked()) {
        const QString text = m_text->toPlainText();
        if (text.trimmed().isEmpty()) {
            valid = false;
        } else {
            // The engine's compiler: bounded work, so checking on every keystroke is safe.
            StructuredOutput output{StructuredOutput::Kind::JsonSchema, text.toStdString(), {}, "schema"};
            if (auto checked = checkStructuredOutput(output); !checked) {
                valid = false;
                m_error = QString::fromStdString(checked.error());
            }
        }
    }
    const bool changed = valid != m_valid;
    m_valid = valid;
    retranslateUi();
    if (changed) emit validityChanged(m_valid);
}

void JsonSchemaEditor::retranslateUi()
{
    m_enabled->setText(tr("Replies are JSON that follows this schema"));
    m_enabled->setToolTip(tr("Structured output: the model can only produce text the schema allows"));
    m_text->setPlaceholderText(tr("A JSON schema, e.g. {\"type\": \"object\", \"properties\": {\"answer\": "
                                  "{\"type\": \"string\"}}, \"required\": [\"answer\"]}"));
    QString status;
    if (!m_enabled->isChecked()) status = tr("Off: replies are free text.");
    else if (m_valid) status = tr("Valid: every reply will follow this schema.");
    else if (m_error.isEmpty()) status = tr("Enter a JSON schema.");
    else status = tr("Cannot be used: %1").arg(m_error);
    m_status->setText(status);
    m_status->setForegroundRole(m_valid ? QPalette::PlaceholderText : QPalette::Text);
    m_status->setStyleSheet(m_valid ? QString() : QStringLiteral("color: #c0392b;"));
}

void JsonSchemaEditor::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

}  // namespace brook
