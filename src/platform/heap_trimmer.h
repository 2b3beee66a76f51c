// Hands the allocator's free memory back to the operating system, now or every few seconds.
//
// Why: a server that runs for days frees most of what it allocates, but glibc's malloc keeps the
// freed pages of its heaps (the main heap and one arena per busy thread) resident until they sit
// at a heap's very top. Requests of very different sizes interleave long- and short-lived blocks,
// so freed pages are often in the middle. malloc_trim(0) returns every whole free page in every
// arena (madvise). It bounds what fragmentation costs; what made the soak's memory creep up was
// glibc's per-thread caches and arenas, which server_malloc.h sets up (docs/benchmarks.md,
// "Reliability").
// Elsewhere (Windows, musl) there is nothing to do here: no such call.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace brook {

// Returns the free pages of every malloc heap to the system. True when some memory was
// released; false when none was or the platform has no such call.
bool releaseFreeHeapMemory();

// Calls releaseFreeHeapMemory() every `interval` on a thread of its own until destroyed. A trim
// walks the heaps under their locks, so the interval keeps its cost (about a millisecond per
// 100 MB of heap) far below a percent of one core.
class HeapTrimmer {
public:
    explicit HeapTrimmer(std::chrono::milliseconds interval = std::chrono::seconds(10));
    ~HeapTrimmer();
    HeapTrimmer(const HeapTrimmer&) = delete;
    HeapTrimmer& operator=(const HeapTrimmer&) = delete;

    int trims() const;  // trims done so far (tests)

private:
    void run();

    std::chrono::milliseconds m_interval;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    int m_trims = 0;
    std::thread m_thread;
};

}  // namespace brook
