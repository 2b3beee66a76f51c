// ModelPanel: what the window shows while no model is loaded: a welcome with the two ways in
// (download ERNIE-4.5-0.3B-PT, or open a local folder), the recent models, and, while a model
// loads, its stage, progress and the memory it is about to take.
#pragma once

#include "gui/shell/engine_host.h"

#include <QWidget>

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace brook {

class ModelPanel : public QWidget {
    Q_OBJECT
public:
    explicit ModelPanel(QWidget* parent = nullptr);

    void setRecentModels(const QStringList& dirs);
    void showLoading(EngineHost::Stage stage, int percent);
    void showEstimate(const MemoryEstimate& estimate);
    void showError(const QString& message);
    void showIdle();
    QString errorText() const;
    QString stageText() const;

    static QString stageName(EngineHost::Stage stage);
    static QString formatBytes(qint64 bytes);

signals:
    void openFolderRequested();
    void downloadRequested();
    void recentModelRequested(const QString& dir);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();

    EngineHost::Stage m_stage = EngineHost::Stage::Checking;
    bool m_loading = false;
    MemoryEstimate m_estimate;
    QLabel* m_logo;
    QLabel* m_title;
    QLabel* m_intro;
    QPushButton* m_download;
    QPushButton* m_open;
    QLabel* m_recentLabel;
    QListWidget* m_recent;
    QLabel* m_stageLabel;
    QProgressBar* m_progress;
    QLabel* m_estimateLabel;
    QLabel* m_error;
};

}  // namespace brook
