// ModelDownloader: fetches a model repository through the hub module (src/server's HubClient or
// ModelScopeClient: resumable, sha256-checked downloads into the Hugging Face or ModelScope cache)
// on a worker thread, and reports progress to the GUI at most every kProgressIntervalMs through
// queued invocations.
// Cancel keeps the partial file, so starting again resumes where it stopped.
// GUI thread only, apart from the worker it starts.
#pragma once

#include "engine/result.h"
#include "hub/hub_client.h"
#include "hub/modelscope_options.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

namespace brook {

struct DownloadStatus {
    QString file;  // repository path of the file being fetched
    int fileIndex = 0;
    int fileCount = 0;
    qint64 bytesDone = 0;
    qint64 bytesTotal = -1;  // -1: unknown
    double bytesPerSecond = 0;
};

class ModelDownloader : public QObject {
    Q_OBJECT
public:
    static constexpr int kProgressIntervalMs = 100;
    static constexpr const char* kDefaultRepo = "baidu/ERNIE-4.5-0.3B-PT";
    static constexpr const char* kDefaultModelScopeRepo = "PaddlePaddle/ERNIE-4.5-0.3B-PT";  // the same model

    explicit ModelDownloader(QObject* parent = nullptr);
    ~ModelDownloader() override;  // cancels and waits

    // False when a download is already running. From the Hugging Face Hub (or a mirror):
    bool start(const QString& repoId, const HubOptions& options);
    // ... or from ModelScope.
    bool start(const QString& modelId, const ModelScopeOptions& options);
    void cancel();
    bool isRunning() const { return m_running; }

    // The environment's hub options with an endpoint override (empty: keep HF_ENDPOINT's).
    static HubOptions optionsFor(const QString& endpoint);
    // The environment's ModelScope options (MODELSCOPE_DOMAIN, MODELSCOPE_CACHE, ...).
    static ModelScopeOptions modelScopeOptions();
    // Whether an error message means "the hub could not be reached" (offline, DNS, refused).
    static bool isOfflineError(const QString& message);

signals:
    void progressChanged(const brook::DownloadStatus& status);
    void finished(const QString& modelDir);
    void failed(const QString& message);
    void cancelled();

private:
    using Job = std::function<Result<std::filesystem::path>(const DownloadProgressCallback&)>;
    bool startJob(std::shared_ptr<CancelSignal> cancel, Job job);

    std::thread m_thread;
    std::shared_ptr<CancelSignal> m_cancel;  // the running job's: also stops a read a silent server blocks
    bool m_running = false;
};

}  // namespace brook

Q_DECLARE_METATYPE(brook::DownloadStatus)
