#include "gui/performance/load_generator.h"

#include <QMetaObject>

#include <spdlog/spdlog.h>

namespace brook {

LoadGenerator::LoadGenerator(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<brook::ServeBenchProgress>("brook::ServeBenchProgress");
    qRegisterMetaType<brook::ServeBenchResult>("brook::ServeBenchResult");
}

LoadGenerator::~LoadGenerator()
{
    if (m_benchmark) m_benchmark->cancel();
    joinWorker();
}

void LoadGenerator::joinWorker()
{
    if (m_worker.joinable()) m_worker.join();
}

ServeBenchProgress LoadGenerator::progress() const
{
    std::lock_guard lock(m_mutex);
    return m_progress;
}

bool LoadGenerator::start(const ServeBenchOptions& options, const QString& label)
{
    if (m_running) return false;
    joinWorker();
    m_running = true;
    m_label = label;
    {
        std::lock_guard lock(m_mutex);
        m_progress = {};
        m_progress.total = options.numPrompts;
        m_progressPosted = false;
    }
    m_benchmark = std::make_unique<ServeBenchmark>(options);
    spdlog::info("load generator: {} requests at {} req/s, {} concurrent users, against {}", options.numPrompts,
                 options.requestRate, options.maxConcurrency, options.resolvedBaseUrl());
    m_worker = std::thread([this, bench = m_benchmark.get(), label] {
        auto result = bench->run([this](const ServeBenchProgress& p) {
            bool post = false;
            {
                std::lock_guard lock(m_mutex);
                m_progress = p;
                post = !m_progressPosted;
                m_progressPosted = true;
            }
            if (!post) return;
            QMetaObject::invokeMethod(
                this,
                [this] {
                    ServeBenchProgress latest;
                    {
                        std::lock_guard lock(m_mutex);
                        latest = m_progress;
                        m_progressPosted = false;
                    }
                    emit progressed(latest);
                },
                Qt::QueuedConnection);
        });
        QMetaObject::invokeMethod(
            this,
            [this, label, result = std::move(result)] {
                m_running = false;
                joinWorker();
                if (result) emit finished(label, *result);
                else emit failed(label, QString::fromStdString(result.error()));
            },
            Qt::QueuedConnection);
    });
    return true;
}

void LoadGenerator::cancel()
{
    if (m_benchmark && m_running) m_benchmark->cancel();
}

}  // namespace brook
