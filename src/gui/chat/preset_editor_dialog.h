// PresetEditorDialog: add, edit and delete prompt presets (name, system prompt, template with
// {input}, keywords for the automatic choice, optional sampling), and restore the built-ins.
// Works on a copy of the library; the caller takes library() when accepted.
#pragma once

#include "gui/chat/preset_library.h"

#include <QDialog>

class QCheckBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace brook {

class PresetEditorDialog : public QDialog {
    Q_OBJECT
public:
    explicit PresetEditorDialog(const PresetLibrary& library, QWidget* parent = nullptr);

    const PresetLibrary& library();  // with the form's pending edits applied

public slots:
    void addPreset();
    void deleteCurrent();

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handleCurrentRowChanged(int row);
    void handleRestore();

private:
    void fillList();
    void showPreset(const PromptPreset* preset);
    void storeForm();  // form -> m_library for m_currentId
    void retranslateUi();

    PresetLibrary m_library;
    QString m_currentId;
    QListWidget* m_list;
    QPushButton* m_add;
    QPushButton* m_delete;
    QPushButton* m_restore;
    QList<QLabel*> m_labels;
    QLineEdit* m_name;
    QPlainTextEdit* m_system;
    QPlainTextEdit* m_template;
    QLineEdit* m_keywords;
    QCheckBox* m_sampling;
    QDoubleSpinBox* m_temperature;
    QDoubleSpinBox* m_topP;
    QSpinBox* m_maxTokens;
    QDialogButtonBox* m_buttons;
};

}  // namespace brook
