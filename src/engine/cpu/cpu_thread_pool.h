// CpuThreadPool: the CPU backend's persistent worker threads (created once with the backend;
// a step creates none). run(n, fn) hands out fn(0..n-1) to the calling thread and the workers
// through one atomic ticket and returns when every item is done.
//
// Why not an OpenMP team: at the end of a parallel region the master waits for every team
// thread to arrive, so on a machine shared with other work (a desktop, or a 2-core VM with
// compiles running) one worker that is descheduled before it even starts holds the whole
// matmul for a time slice (4 ms, against a 0.1 ms GEMV). Here the caller waits only for items
// that were actually claimed; a worker that wakes late finds the work gone. Workers spin
// briefly between items of consecutive calls (a decode step makes ~100 calls in ~15 ms), then
// sleep on a condition variable.
// run() is for one caller thread at a time (the engine thread); fn must not call run().
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace brook::cpu {

class CpuThreadPool {
public:
    // threads: the total including the caller; <= 1 runs everything on the caller.
    // 0: BROOK_CPU_THREADS when set, else std::thread::hardware_concurrency().
    explicit CpuThreadPool(int threads = 0);
    ~CpuThreadPool();
    CpuThreadPool(const CpuThreadPool&) = delete;
    CpuThreadPool& operator=(const CpuThreadPool&) = delete;

    int threads() const { return int(m_workers.size()) + 1; }

    template <typename Fn>
    void run(int n, const Fn& fn)
    {
        if (n <= 0) return;
        if (m_workers.empty() || n == 1) {
            for (int i = 0; i < n; ++i) fn(i);
            return;
        }
        runItems(
            n, [](const void* f, int i) { (*static_cast<const Fn*>(f))(i); }, &fn);
    }

private:
    using Trampoline = void (*)(const void* fn, int item);
    void runItems(int n, Trampoline call, const void* fn);
    void workerLoop();
    // Claims and runs items of generation `gen` until none is left or the generation moved on.
    void drain(uint32_t gen, Trampoline call, const void* fn, int n);

    std::vector<std::thread> m_workers;
    // (generation << 32) | next item: a claim is a CAS that also proves the generation is current.
    // Each run() takes two generations: closed (next item 0xFFFFFFFF) while the fields below are
    // rewritten, then open.
    std::atomic<uint64_t> m_ticket{0};
    std::atomic<int> m_pending{0};  // items of the current generation not yet finished
    // The current generation's work; written before the ticket that publishes it.
    std::atomic<Trampoline> m_call{nullptr};
    std::atomic<const void*> m_fn{nullptr};
    std::atomic<int> m_n{0};
    std::atomic<int> m_sleepers{0};
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    std::condition_variable m_wake;
};

// body(r0, r1) over rows [0, rows) in chunks of rowsPerChunk, spread over the pool when there are
// at least two chunks; otherwise (or without a pool) one call on the caller. For a step's row-wise
// work (norms, RoPE, conversions): a prompt's rows on all cores, a decode batch's few rows where
// a hand-off would cost more than it saves. Each row is computed as on one thread.
template <typename Body>
void forRowChunks(CpuThreadPool* pool, int rows, int rowsPerChunk, const Body& body)
{
    const int chunks = (rows + rowsPerChunk - 1) / rowsPerChunk;
    if (!pool || chunks < 2) {
        body(0, rows);
        return;
    }
    pool->run(chunks, [&](int c) { body(c * rowsPerChunk, std::min(rows, (c + 1) * rowsPerChunk)); });
}

}  // namespace brook::cpu
