// LoadGenerator: runs ServeBenchmark (the code behind `brook-bench serve`) on a worker thread for
// the GUI. Progress is coalesced into at most one queued event at a time; the result or the error
// comes back on the GUI thread. Cancel hangs up on the requests in flight; the destructor cancels
// and joins. GUI thread only, apart from the worker it starts.
#pragma once

#include "loadgen/serve_benchmark.h"

#include <QObject>
#include <QString>

#include <memory>
#include <mutex>
#include <thread>

Q_DECLARE_METATYPE(brook::ServeBenchProgress)
Q_DECLARE_METATYPE(brook::ServeBenchResult)

namespace brook {

class LoadGenerator : public QObject {
    Q_OBJECT
public:
    explicit LoadGenerator(QObject* parent = nullptr);
    ~LoadGenerator() override;

    // False when a run is still going. `label` names the run in the results (a profile).
    bool start(const ServeBenchOptions& options, const QString& label);
    void cancel();
    bool isRunning() const { return m_running; }
    QString label() const { return m_label; }
    ServeBenchProgress progress() const;

signals:
    void progressed(const brook::ServeBenchProgress& progress);
    void finished(const QString& label, const brook::ServeBenchResult& result);
    void failed(const QString& label, const QString& message);

private:
    void joinWorker();

    std::unique_ptr<ServeBenchmark> m_benchmark;
    std::thread m_worker;
    bool m_running = false;
    QString m_label;
    mutable std::mutex m_mutex;  // guards the two below (worker and GUI threads)
    ServeBenchProgress m_progress;
    bool m_progressPosted = false;
};

}  // namespace brook
