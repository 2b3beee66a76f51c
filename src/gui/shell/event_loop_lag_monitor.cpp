#include "gui/shell/event_loop_lag_monitor.h"

#include <spdlog/spdlog.h>

namespace brook {

EventLoopLagMonitor::EventLoopLagMonitor(std::chrono::milliseconds interval, std::chrono::milliseconds stallThreshold,
                                         QObject* parent)
    : QObject(parent), m_intervalMs(interval.count()), m_thresholdMs(stallThreshold.count())
{
    // A precise timer: a coarse one may fire 5% late by design, which is not the thread's fault.
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(interval);
    connect(&m_timer, &QTimer::timeout, this, &EventLoopLagMonitor::tick);
    m_sinceLastTick.start();
    m_timer.start();
}

void EventLoopLagMonitor::tick()
{
    const qint64 lag = m_sinceLastTick.restart() - m_intervalMs;
    ++m_ticks;
    if (lag > m_worstLagMs) m_worstLagMs = lag;
    if (lag <= m_thresholdMs) return;
    ++m_stalls;
    spdlog::warn("GUI thread stalled: the event loop ran {} ms late", lag);
    emit stalled(lag);
}

}  // namespace brook
