// DownloadDialog: downloads a model from the Hugging Face Hub, a mirror (HF_ENDPOINT style) or
// ModelScope (modelscope.cn, where ERNIE is PaddlePaddle/ERNIE-4.5-0.3B-PT), picked from a short
// list of known-good models (size, and whether each fits this computer) or typed in, through
// ModelDownloader: progress bar, file, speed and time left, Cancel (the partial file is kept, so
// Download again resumes). Offline, it says so plainly and offers the local-folder path.
#pragma once

#include "gui/shell/model_downloader.h"
#include "launch/launch_options.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace brook {

class DownloadDialog : public QDialog {
    Q_OBJECT
public:
    // The source combo box's entries, in order.
    enum class Source { HuggingFace, Mirror, ModelScope, CustomEndpoint };

    // `endpoint`: the saved source (empty: Hugging Face or HF_ENDPOINT; ModelScope's URL picks it).
    explicit DownloadDialog(const QString& endpoint, QWidget* parent = nullptr);

    QString endpoint() const;  // what the user picked, to be saved
    Source source() const;
    QString downloadedFolder() const { return m_folder; }
    ModelDownloader& downloader() { return m_downloader; }
    QString statusText() const;
    // The known-good list, sized for these serving knobs and this much memory (the constructor
    // uses the desktop defaults and this computer's memory). Picking one fills in its id.
    void setKnownModels(const LaunchOptions& serving, qint64 hostBytes);
    QListWidget* knownModels() const { return m_known; }

public slots:
    void startDownload();

signals:
    void modelDownloaded(const QString& modelDir);
    void openFolderRequested();

protected:
    void changeEvent(QEvent* event) override;
    void reject() override;  // cancels a running download first

private slots:
    void handleProgress(const brook::DownloadStatus& status);
    void handleFinished(const QString& modelDir);
    void handleFailed(const QString& message);
    void handleCancelled();
    void handleSourceChanged();

private:
    void retranslateUi();
    void updateCacheLabel();
    void setRunning(bool running);

    ModelDownloader m_downloader;
    QString m_folder;
    QLabel* m_knownLabel;
    QListWidget* m_known;
    QLabel* m_repoLabel;
    QLineEdit* m_repo;
    QLabel* m_sourceLabel;
    QComboBox* m_source;
    Source m_lastSource = Source::HuggingFace;
    QLineEdit* m_endpoint;
    QLabel* m_cacheLabel;
    QProgressBar* m_progress;
    QLabel* m_status;
    QPushButton* m_start;
    QPushButton* m_cancel;
    QPushButton* m_openFolder;
    QPushButton* m_close;
};

}  // namespace brook
