#include "hub/cancel_signal.h"

namespace brook {

CancelSignal::Scope::~Scope()
{
    if (!m_signal) return;
    std::lock_guard lock(m_signal->m_mutex);
    m_signal->m_stop = nullptr;
}

void CancelSignal::cancel()
{
    // The stop runs under the lock, so the transfer cannot end (and its client go away) meanwhile.
    std::lock_guard lock(m_mutex);
    m_cancelled = true;
    if (m_stop) m_stop();
}

bool CancelSignal::cancelled() const
{
    std::lock_guard lock(m_mutex);
    return m_cancelled;
}

CancelSignal::Scope CancelSignal::whileRunning(std::function<void()> stop)
{
    std::lock_guard lock(m_mutex);
    if (m_cancelled) stop();
    else m_stop = std::move(stop);
    return Scope(this);
}

}  // namespace brook
