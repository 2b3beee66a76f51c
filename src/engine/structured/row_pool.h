// RowPool: persistent worker threads for structured decoding's per-row work (a step's token
// masks before the GPU runs, the grammar advances after it). At batch 64 that work, done row
// by row on the engine thread, is several times the 1 ms a decode step takes on the GPU.
//
// run(n, fn) publishes one job; the caller and the woken workers take items through an atomic
// ticket, and the caller waits only for items that were taken, so a worker that wakes late (a
// loaded machine) finds the work done instead of holding up the step. Workers sleep between
// jobs: a step's two jobs are a GPU step apart, too long to spin through. No thread is created
// per step. run() is for one caller at a time; fn must not call run().
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace brook::structured {

class RowPool {
public:
    // threads: the total including the caller; 0 picks defaultThreads().
    explicit RowPool(int threads = 0);
    ~RowPool();
    RowPool(const RowPool&) = delete;
    RowPool& operator=(const RowPool&) = delete;

    // Half of hardware_concurrency, 2 to 8, and 1 on 2 cores (see row_pool.cpp), or
    // BROOK_STRUCTURED_THREADS.
    static int defaultThreads();
    int threads() const { return int(m_workers.size()) + 1; }
    // Calls fn(i) for every i in [0, n) on the caller and the workers; returns when all are done.
    void run(size_t n, const std::function<void(size_t)>& fn);

private:
    struct Job;
    void work();

    std::vector<std::thread> m_workers;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::shared_ptr<Job> m_job;  // the latest job; workers hold it while they take items
    uint64_t m_jobNumber = 0;
    bool m_stopping = false;
};

}  // namespace brook::structured
