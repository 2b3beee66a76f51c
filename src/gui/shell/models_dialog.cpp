#include "gui/shell/models_dialog.h"

#include "gui/performance/capacity_plan_view.h"

#include <QDesktopServices>
#include <QDir>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

namespace brook {

ModelsDialog::ModelsDialog(std::function<QList<ModelEntry>()> scan, QWidget* parent)
    : QDialog(parent), m_scan(std::move(scan))
{
    setObjectName(QStringLiteral("modelsDialog"));
    m_hint = new QLabel(this);
    m_hint->setWordWrap(true);
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("modelsTable"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_load = new QPushButton(this);
    m_load->setObjectName(QStringLiteral("modelsLoad"));
    m_load->setDefault(true);
    m_unload = new QPushButton(this);
    m_unload->setObjectName(QStringLiteral("modelsUnload"));
    m_delete = new QPushButton(this);
    m_delete->setObjectName(QStringLiteral("modelsDelete"));
    m_reveal = new QPushButton(this);
    m_reveal->setObjectName(QStringLiteral("modelsReveal"));
    m_close = new QPushButton(this);

    connect(m_table, &QTableWidget::itemSelectionChanged, this, &ModelsDialog::updateButtons);
    connect(m_table, &QTableWidget::itemActivated, this, [this] { m_load->click(); });
    connect(m_load, &QPushButton::clicked, this, [this] {
        if (const ModelEntry* e = selected()) emit loadRequested(e->dir);
    });
    connect(m_unload, &QPushButton::clicked, this, &ModelsDialog::unloadRequested);
    connect(m_delete, &QPushButton::clicked, this, [this] { deleteSelected(); });
    connect(m_reveal, &QPushButton::clicked, this, [this] {
        if (const ModelEntry* e = selected()) QDesktopServices::openUrl(QUrl::fromLocalFile(e->dir));
    });
    connect(m_close, &QPushButton::clicked, this, &QDialog::accept);

    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {m_load, m_unload, m_delete, m_reveal}) buttons->addWidget(b);
    buttons->addStretch(1);
    buttons->addWidget(m_close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_hint);
    layout->addWidget(m_table, 1);
    layout->addLayout(buttons);
    retranslateUi();
    refresh();
    resize(860, 420);
}

void ModelsDialog::setLoadedDir(const QString& dir)
{
    m_loadedDir = QDir::cleanPath(dir);
    if (dir.isEmpty()) m_loadedDir.clear();
    refresh();
}

void ModelsDialog::refresh()
{
    const QString keep = selected() ? selected()->dir : m_loadedDir;
    m_entries = m_scan ? m_scan() : QList<ModelEntry>();
    const QLocale locale;
    m_table->setRowCount(int(m_entries.size()));
    for (int row = 0; row < m_entries.size(); ++row) {
        const ModelEntry& e = m_entries[row];
        const bool loaded = e.dir == m_loadedDir;
        auto set = [&](int column, const QString& text) {
            auto* item = new QTableWidgetItem(text);
            if (loaded) {
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
            }
            item->setToolTip(e.dir);
            m_table->setItem(row, column, item);
        };
        set(Name, loaded ? tr("%1 (loaded)").arg(e.name) : e.name);
        set(Size, CapacityPlanView::formatBytes(double(e.bytes)));
        set(Quantization, e.quantization.isEmpty() ? tr("unknown") : e.quantization);
        set(LastUsed, e.lastUsed.isValid() ? locale.toString(e.lastUsed, QLocale::ShortFormat) : tr("never"));
        set(Folder, QDir::toNativeSeparators(e.dir));
        if (e.dir == keep) m_table->selectRow(row);
    }
    updateButtons();
}

const ModelEntry* ModelsDialog::selected() const
{
    const QList<QTableWidgetItem*> items = m_table->selectedItems();
    if (items.isEmpty()) return nullptr;
    const int row = items.first()->row();
    return row >= 0 && row < m_entries.size() ? &m_entries[row] : nullptr;
}

void ModelsDialog::updateButtons()
{
    const ModelEntry* e = selected();
    const bool loaded = e && e->dir == m_loadedDir;
    m_load->setEnabled(e && !loaded);
    m_unload->setEnabled(!m_loadedDir.isEmpty());
    m_delete->setEnabled(e && !loaded);  // unload it first
    m_reveal->setEnabled(e != nullptr);
}

bool ModelsDialog::deleteSelected(bool confirmed)
{
    const ModelEntry* e = selected();
    if (!e || e->dir == m_loadedDir) return false;
    const ModelEntry entry = *e;
    if (!confirmed && QMessageBox::question(this, tr("Delete model"),
                                            tr("Delete %1 (%2) from this disk?\n%3")
                                                .arg(entry.name, CapacityPlanView::formatBytes(double(entry.bytes)),
                                                     QDir::toNativeSeparators(entry.dir))) != QMessageBox::Yes)
        return false;
    QString error;
    if (!ModelLibrary::remove(entry, &error)) {
        QMessageBox::warning(this, tr("Delete model"), tr("Could not delete %1.").arg(error));
        return false;
    }
    refresh();
    return true;
}

void ModelsDialog::retranslateUi()
{
    setWindowTitle(tr("Models"));
    m_hint->setText(tr("Models in the Hugging Face cache and the folders opened here."));
    m_table->setHorizontalHeaderLabels({tr("Model"), tr("Size"), tr("Quantization"), tr("Last used"), tr("Folder")});
    m_load->setText(tr("Load"));
    m_unload->setText(tr("Unload"));
    m_delete->setText(tr("Delete…"));
    m_reveal->setText(tr("Show in file manager"));
    m_close->setText(tr("Close"));
}

void ModelsDialog::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
        refresh();
    }
    QDialog::changeEvent(event);
}

}  // namespace brook
