// JsonSchemaEditor: a conversation's structured-output setting: a switch and a JSON schema that
// every reply must follow, checked as the user types (the engine's own compiler, through
// engine/structured_output.h, so what it accepts here the engine can honour) with the reason
// shown when it cannot be used.
#pragma once

#include <QWidget>

class QCheckBox;
class QLabel;
class QPlainTextEdit;

namespace brook {

class JsonSchemaEditor : public QWidget {
    Q_OBJECT
public:
    explicit JsonSchemaEditor(QWidget* parent = nullptr);

    // Empty: structured output off.
    void setSchema(const QString& schema);
    // The schema when the switch is on, else empty.
    QString schema() const;
    // Off, or on with a schema the engine accepts.
    bool isValid() const { return m_valid; }

signals:
    void validityChanged(bool valid);

protected:
    void changeEvent(QEvent* event) override;

private:
    void validate();
    void retranslateUi();

    QCheckBox* m_enabled;
    QPlainTextEdit* m_text;
    QLabel* m_status;
    bool m_valid = true;
    QString m_error;  // the engine's reason, when not valid
};

}  // namespace brook
