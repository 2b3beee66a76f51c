// ModelsDialog: the Models page: every model on disk (ModelLibrary) with its size, quantization
// and last use, the loaded one marked; Load, Unload, Delete (after a confirmation naming the
// folder) and Show in the file manager. The window does the loading; the dialog asks.
#pragma once

#include "gui/shell/model_library.h"

#include <QDialog>
#include <functional>

class QLabel;
class QPushButton;
class QTableWidget;

namespace brook {

class ModelsDialog : public QDialog {
    Q_OBJECT
public:
    enum Column { Name, Size, Quantization, LastUsed, Folder, ColumnCount };

    // `scan` lists the models (called again after a delete or a load).
    ModelsDialog(std::function<QList<ModelEntry>()> scan, QWidget* parent = nullptr);

    void setLoadedDir(const QString& dir);  // "" while none is loaded
    void refresh();
    QTableWidget* table() const { return m_table; }
    const QList<ModelEntry>& entries() const { return m_entries; }
    // Deletes the selected model's files; asks first unless `confirmed`. The loaded one cannot go.
    bool deleteSelected(bool confirmed = false);

signals:
    void loadRequested(const QString& dir);
    void unloadRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    void updateButtons();
    const ModelEntry* selected() const;

    std::function<QList<ModelEntry>()> m_scan;
    QList<ModelEntry> m_entries;
    QString m_loadedDir;
    QLabel* m_hint;
    QTableWidget* m_table;
    QPushButton* m_load;
    QPushButton* m_unload;
    QPushButton* m_delete;
    QPushButton* m_reveal;
    QPushButton* m_close;
};

}  // namespace brook
