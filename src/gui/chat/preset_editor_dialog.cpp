#include "gui/chat/preset_editor_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

namespace brook {

PresetEditorDialog::PresetEditorDialog(const PresetLibrary& library, QWidget* parent)
    : QDialog(parent), m_library(library)
{
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("presetList"));
    m_add = new QPushButton(this);
    m_delete = new QPushButton(this);
    m_restore = new QPushButton(this);
    m_name = new QLineEdit(this);
    m_name->setObjectName(QStringLiteral("presetName"));
    m_system = new QPlainTextEdit(this);
    m_system->setObjectName(QStringLiteral("presetSystemPrompt"));
    m_template = new QPlainTextEdit(this);
    m_template->setObjectName(QStringLiteral("presetTemplate"));
    m_keywords = new QLineEdit(this);
    m_keywords->setObjectName(QStringLiteral("presetKeywords"));
    m_sampling = new QCheckBox(this);
    m_temperature = new QDoubleSpinBox(this);
    m_temperature->setRange(0.0, 2.0);
    m_temperature->setSingleStep(0.05);
    m_topP = new QDoubleSpinBox(this);
    m_topP->setRange(0.01, 1.0);
    m_topP->setSingleStep(0.05);
    m_maxTokens = new QSpinBox(this);
    m_maxTokens->setRange(1, 131072);
    connect(m_sampling, &QCheckBox::toggled, this, [this](bool on) {
        m_temperature->setEnabled(on);
        m_topP->setEnabled(on);
        m_maxTokens->setEnabled(on);
    });

    auto* form = new QFormLayout;
    for (QWidget* field : std::initializer_list<QWidget*>{m_name, m_system, m_template, m_keywords, m_sampling,
                                                          m_temperature, m_topP, m_maxTokens}) {
        auto* label = new QLabel(this);
        label->setBuddy(field);
        m_labels.append(label);
        form->addRow(label, field);
    }
    auto* listButtons = new QHBoxLayout;
    listButtons->addWidget(m_add);
    listButtons->addWidget(m_delete);
    auto* left = new QVBoxLayout;
    left->addWidget(m_list, 1);
    left->addLayout(listButtons);
    left->addWidget(m_restore);
    auto* columns = new QHBoxLayout;
    columns->addLayout(left, 1);
    columns->addLayout(form, 3);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(columns);
    layout->addWidget(m_buttons);

    connect(m_list, &QListWidget::currentRowChanged, this, &PresetEditorDialog::handleCurrentRowChanged);
    connect(m_add, &QPushButton::clicked, this, &PresetEditorDialog::addPreset);
    connect(m_delete, &QPushButton::clicked, this, &PresetEditorDialog::deleteCurrent);
    connect(m_restore, &QPushButton::clicked, this, &PresetEditorDialog::handleRestore);
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        storeForm();
        accept();
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    retranslateUi();
    fillList();
    resize(760, 480);
}

const PresetLibrary& PresetEditorDialog::library()
{
    storeForm();
    return m_library;
}

void PresetEditorDialog::fillList()
{
    const QString keep = m_currentId;
    m_currentId.clear();  // the form is already stored
    m_list->blockSignals(true);
    m_list->clear();
    int select = 0;
    for (const PromptPreset& p : m_library.presets()) {
        auto* item = new QListWidgetItem(p.name, m_list);
        item->setData(Qt::UserRole, p.id);
        if (p.id == keep) select = m_list->count() - 1;
    }
    m_list->blockSignals(false);
    if (m_list->count() > 0) {
        m_list->setCurrentRow(select);
        handleCurrentRowChanged(select);
    } else {
        showPreset(nullptr);
    }
}

void PresetEditorDialog::showPreset(const PromptPreset* p)
{
    m_currentId = p ? p->id : QString();
    for (QWidget* w : std::initializer_list<QWidget*>{m_name, m_system, m_template, m_keywords, m_sampling, m_delete})
        w->setEnabled(p != nullptr);
    m_name->setText(p ? p->name : QString());
    m_system->setPlainText(p ? p->systemPrompt : QString());
    m_template->setPlainText(p ? p->inputTemplate : QString());
    m_keywords->setText(p ? p->keywords.join(QStringLiteral(", ")) : QString());
    const bool sampling = p && (p->temperature || p->topP || p->maxTokens);
    m_sampling->setChecked(sampling);
    m_temperature->setEnabled(sampling);
    m_topP->setEnabled(sampling);
    m_maxTokens->setEnabled(sampling);
    m_temperature->setValue(p && p->temperature ? *p->temperature : 0.8);
    m_topP->setValue(p && p->topP ? *p->topP : 0.8);
    m_maxTokens->setValue(p && p->maxTokens ? *p->maxTokens : 1024);
}

void PresetEditorDialog::storeForm()
{
    const PromptPreset* existing = m_library.find(m_currentId);
    if (!existing) return;
    PromptPreset p = *existing;
    p.name = m_name->text().trimmed().isEmpty() ? existing->name : m_name->text().trimmed();
    p.systemPrompt = m_system->toPlainText();
    p.inputTemplate = m_template->toPlainText();
    p.keywords.clear();
    for (const QString& k : m_keywords->text().split(QRegularExpression(QStringLiteral("[,，]")), Qt::SkipEmptyParts))
        if (!k.trimmed().isEmpty()) p.keywords << k.trimmed();
    if (m_sampling->isChecked()) {
        p.temperature = m_temperature->value();
        p.topP = m_topP->value();
        p.maxTokens = m_maxTokens->value();
    } else {
        p.temperature.reset();
        p.topP.reset();
        p.maxTokens.reset();
    }
    m_library.update(p);
    if (QListWidgetItem* item = m_list->currentItem(); item && item->data(Qt::UserRole).toString() == p.id)
        item->setText(p.name);
}

void PresetEditorDialog::handleCurrentRowChanged(int row)
{
    storeForm();
    QListWidgetItem* item = m_list->item(row);
    showPreset(item ? m_library.find(item->data(Qt::UserRole).toString()) : nullptr);
}

void PresetEditorDialog::addPreset()
{
    storeForm();
    PromptPreset p;
    p.name = tr("New preset");
    p.inputTemplate = QStringLiteral("{input}");
    m_currentId = m_library.add(p);
    fillList();
    m_name->setFocus();
    m_name->selectAll();
}

void PresetEditorDialog::deleteCurrent()
{
    if (m_currentId.isEmpty()) return;
    m_library.remove(m_currentId);
    m_currentId.clear();
    fillList();
}

void PresetEditorDialog::handleRestore()
{
    storeForm();
    m_library.restoreBuiltins();
    fillList();
}

void PresetEditorDialog::retranslateUi()
{
    setWindowTitle(tr("Prompt presets"));
    m_add->setText(tr("Add"));
    m_delete->setText(tr("Delete"));
    m_restore->setText(tr("Restore built-in presets"));
    const QStringList labels = {tr("Name:"), tr("System prompt:"), tr("Input template:"), tr("Keywords:"),
                                QString(),   tr("Temperature:"),   tr("Top-p:"),          tr("Max tokens:")};
    for (int i = 0; i < labels.size() && i < m_labels.size(); ++i) m_labels[i]->setText(labels[i]);
    m_sampling->setText(tr("Set sampling"));
    m_template->setPlaceholderText(tr("{input} marks where the message goes; empty: the message as typed"));
    m_keywords->setPlaceholderText(tr("Comma-separated; any of them in a message picks this preset"));
}

void PresetEditorDialog::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QDialog::changeEvent(event);
}

}  // namespace brook
