#include "platform/heap_trimmer.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace brook {

bool releaseFreeHeapMemory()
{
#if defined(__GLIBC__)
    return malloc_trim(0) != 0;
#else
    return false;
#endif
}

HeapTrimmer::HeapTrimmer(std::chrono::milliseconds interval) : m_interval(interval), m_thread([this] { run(); }) {}

HeapTrimmer::~HeapTrimmer()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    m_thread.join();
}

int HeapTrimmer::trims() const
{
    std::lock_guard lock(m_mutex);
    return m_trims;
}

void HeapTrimmer::run()
{
    std::unique_lock lock(m_mutex);
    while (!m_wake.wait_for(lock, m_interval, [this] { return m_stopping; })) {
        lock.unlock();
        releaseFreeHeapMemory();
        lock.lock();
        ++m_trims;
    }
}

}  // namespace brook
