#include "engine/structured/row_pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace brook::structured {

struct RowPool::Job {
    const std::function<void(size_t)>* fn = nullptr;
    size_t n = 0;
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};

    // Takes items until none is left.
    void take()
    {
        for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
             i = next.fetch_add(1, std::memory_order_relaxed)) {
            (*fn)(i);
            done.fetch_add(1, std::memory_order_release);
        }
    }
};

int RowPool::defaultThreads()
{
    if (const char* env = std::getenv("BROOK_STRUCTURED_THREADS")) {
        const int n = std::atoi(env);
        if (n >= 1) return std::min(n, 64);
    }
    // Half the cores (the server's threads and the GPU driver's want the rest), at most 8; none
    // on 2 cores, where brook-bench throughput --device cpu --json-schema spent 0.116 s of engine
    // thread on structured work with 2 threads against 0.063 s row by row (waking a thread that
    // has no core to run on costs more than the rows).
    const int cores = int(std::thread::hardware_concurrency());
    return cores <= 2 ? 1 : std::clamp(cores / 2, 2, 8);
}

RowPool::RowPool(int threads)
{
    if (threads <= 0) threads = defaultThreads();
    for (int i = 1; i < threads; ++i) m_workers.emplace_back([this] { work(); });
    spdlog::debug("structured decoding: {} thread(s) for per-row grammar work", threads);
}

RowPool::~RowPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    for (std::thread& t : m_workers) t.join();
}

void RowPool::work()
{
    uint64_t seen = 0;
    for (;;) {
        std::shared_ptr<Job> job;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stopping || m_jobNumber != seen; });
            if (m_stopping) return;
            seen = m_jobNumber;
            job = m_job;
        }
        // A job that is already finished (this worker woke late) has no items left to take; the
        // shared pointer keeps it alive until then.
        job->take();
    }
}

void RowPool::run(size_t n, const std::function<void(size_t)>& fn)
{
    if (n == 0) return;
    if (m_workers.empty() || n == 1) {
        for (size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    auto job = std::make_shared<Job>();
    job->fn = &fn;
    job->n = n;
    {
        std::lock_guard lock(m_mutex);
        m_job = job;
        ++m_jobNumber;
    }
    m_wake.notify_all();
    job->take();
    // Every item is taken; wait for those still running on workers (microseconds each).
    while (job->done.load(std::memory_order_acquire) < n) std::this_thread::yield();
}

}  // namespace brook::structured
