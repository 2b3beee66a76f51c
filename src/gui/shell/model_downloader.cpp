#include "gui/shell/model_downloader.h"

#include "hub/hub_client.h"
#include "hub/modelscope_client.h"

#include <QMetaObject>

#include <chrono>

namespace brook {

ModelDownloader::ModelDownloader(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<brook::DownloadStatus>("brook::DownloadStatus");
}

ModelDownloader::~ModelDownloader()
{
    cancel();
    if (m_thread.joinable()) m_thread.join();
}

HubOptions ModelDownloader::optionsFor(const QString& endpoint)
{
    HubOptions options = HubOptions::fromEnvironment();
    QString e = endpoint.trimmed();
    while (e.endsWith(QLatin1Char('/'))) e.chop(1);
    if (!e.isEmpty()) options.endpoint = e.toStdString();
    return options;
}

ModelScopeOptions ModelDownloader::modelScopeOptions() { return ModelScopeOptions::fromEnvironment(); }

bool ModelDownloader::isOfflineError(const QString& message)
{
    return message.contains(QLatin1String("cannot download")) || message.contains(QLatin1String("unreachable")) ||
           message.contains(QLatin1String("HF_HUB_OFFLINE")) || message.contains(QLatin1String("MODELSCOPE_OFFLINE"));
}

bool ModelDownloader::start(const QString& repoId, const HubOptions& options)
{
    HubOptions withCancel = options;
    withCancel.cancel = std::make_shared<CancelSignal>();
    return startJob(withCancel.cancel,
                    [repo = repoId.toStdString(), withCancel](const DownloadProgressCallback& progress) {
                        return HubClient(withCancel).download(repo, progress);
                    });
}

bool ModelDownloader::start(const QString& modelId, const ModelScopeOptions& options)
{
    ModelScopeOptions withCancel = options;
    withCancel.cancel = std::make_shared<CancelSignal>();
    return startJob(withCancel.cancel,
                    [model = modelId.toStdString(), withCancel](const DownloadProgressCallback& progress) {
                        return ModelScopeClient(withCancel).download(model, progress);
                    });
}

bool ModelDownloader::startJob(std::shared_ptr<CancelSignal> cancel, Job job)
{
    if (m_running) return false;
    if (m_thread.joinable()) m_thread.join();
    m_running = true;
    m_cancel = cancel;
    m_thread = std::thread([this, cancelFlag = std::move(cancel), job = std::move(job)] {
        using Clock = std::chrono::steady_clock;
        Clock::time_point lastPost{};
        Clock::time_point windowStart = Clock::now();
        int64_t windowBytes = 0;
        double speed = 0;
        auto progress = [&](const DownloadProgress& p) {
            if (cancelFlag->cancelled()) return false;
            const auto now = Clock::now();
            const double window = std::chrono::duration<double>(now - windowStart).count();
            if (window >= 0.5) {
                // Speed over the last half second, smoothed so the label does not flicker.
                const double current = double(p.bytesDone - windowBytes) / window;
                speed = speed > 0 ? 0.6 * speed + 0.4 * current : current;
                windowStart = now;
                windowBytes = p.bytesDone;
            }
            const bool last = p.fileBytesTotal >= 0 && p.fileBytesDone >= p.fileBytesTotal;
            if (!last && now - lastPost < std::chrono::milliseconds(kProgressIntervalMs)) return true;
            lastPost = now;
            DownloadStatus s{
                QString::fromStdString(p.file), p.fileIndex, p.fileCount, p.bytesDone, p.bytesTotal, speed};
            QMetaObject::invokeMethod(
                this, [this, s] { emit progressChanged(s); }, Qt::QueuedConnection);
            return true;
        };
        auto result = job(progress);
        const bool wasCancelled = cancelFlag->cancelled();
        QString folder, error;
        if (result) folder = QString::fromStdString(result->string());
        else error = QString::fromStdString(result.error());
        QMetaObject::invokeMethod(
            this,
            [this, wasCancelled, folder, error] {
                m_running = false;
                if (!folder.isEmpty()) emit finished(folder);
                else if (wasCancelled) emit cancelled();
                else emit failed(error);
            },
            Qt::QueuedConnection);
    });
    return true;
}

void ModelDownloader::cancel()
{
    if (m_cancel) m_cancel->cancel();
}

}  // namespace brook
