#include "engine/cpu/cpu_thread_pool.h"

#include <cstdlib>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BROOK_CPU_RELAX() _mm_pause()
#else
#define BROOK_CPU_RELAX() std::this_thread::yield()
#endif

namespace brook::cpu {

namespace {

// ~50-100 us of pause loops: longer than the gap between two matmuls of a step, far shorter
// than the gap between steps of an idle engine.
constexpr int kSpinsBeforeSleep = 20000;

int defaultThreads()
{
    if (const char* env = std::getenv("BROOK_CPU_THREADS"); env && *env) {
        const int n = std::atoi(env);
        if (n > 0) return n;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? int(hw) : 1;
}

uint32_t generationOf(uint64_t ticket) { return uint32_t(ticket >> 32); }

}  // namespace

CpuThreadPool::CpuThreadPool(int threads)
{
    if (threads <= 0) threads = defaultThreads();
    for (int i = 1; i < threads; ++i) m_workers.emplace_back([this] { workerLoop(); });
}

CpuThreadPool::~CpuThreadPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& t : m_workers) t.join();
}

void CpuThreadPool::drain(uint32_t gen, Trampoline call, const void* fn, int n)
{
    uint64_t t = m_ticket.load();
    while (generationOf(t) == gen && uint32_t(t) < uint32_t(n)) {
        if (!m_ticket.compare_exchange_weak(t, t + 1)) continue;  // t reloaded
        call(fn, int(uint32_t(t)));
        m_pending.fetch_sub(1);
        t = m_ticket.load();
    }
}

void CpuThreadPool::runItems(int n, Trampoline call, const void* fn)
{
    // Two generations a call: first a closed one (no item can be claimed) while the fields
    // change, then the open one. A worker still holding the previous call's ticket can then
    // never claim an item of this call with a mix of old and new fields.
    const uint32_t closed = generationOf(m_ticket.load()) + 1, gen = closed + 1;
    m_ticket.store((uint64_t(closed) << 32) | 0xFFFFFFFFu);
    m_call.store(call);
    m_fn.store(fn);
    m_n.store(n);
    m_pending.store(n);
    m_ticket.store(uint64_t(gen) << 32);  // publishes the generation (seq_cst, after the fields)
    if (m_sleepers.load() > 0) {
        {
            std::lock_guard lock(m_mutex);
        }  // a worker between its check and its wait gets the notify
        m_wake.notify_all();
    }
    drain(gen, call, fn, n);
    while (m_pending.load() > 0) BROOK_CPU_RELAX();  // only items a worker already claimed
}

void CpuThreadPool::workerLoop()
{
    uint32_t seen = 0;
    while (true) {
        int spins = 0;
        uint64_t t = m_ticket.load();
        while (generationOf(t) == seen && !m_stop.load()) {
            if (++spins < kSpinsBeforeSleep) {
                BROOK_CPU_RELAX();
            } else {
                std::unique_lock lock(m_mutex);
                ++m_sleepers;
                m_wake.wait(lock, [&] { return generationOf(m_ticket.load()) != seen || m_stop.load(); });
                --m_sleepers;
                spins = 0;
            }
            t = m_ticket.load();
        }
        if (m_stop.load()) return;
        seen = generationOf(t);
        // The fields were stored before the ticket; if the generation moves on meanwhile, every
        // claim in drain() fails its CAS and the loop comes back for the new one.
        drain(seen, m_call.load(), m_fn.load(), m_n.load());
    }
}

}  // namespace brook::cpu
