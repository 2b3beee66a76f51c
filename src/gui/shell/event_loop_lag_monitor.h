// EventLoopLagMonitor: notices when the GUI thread stops turning its event loop. A timer asks to
// run every `interval`; when it runs late by more than `stallThreshold`, the thread was busy or
// blocked that long (a window that does not repaint, typing that does not echo), and a warning
// names the lateness. The app runs for days with an engine and a server inside it: this is how a
// long run (bench/app_soak.py) shows that the window stayed responsive, and how a user's log
// shows when it did not.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <chrono>

namespace brook {

class EventLoopLagMonitor : public QObject {
    Q_OBJECT
public:
    explicit EventLoopLagMonitor(std::chrono::milliseconds interval = std::chrono::milliseconds(50),
                                 std::chrono::milliseconds stallThreshold = std::chrono::milliseconds(100),
                                 QObject* parent = nullptr);

    qint64 stalls() const { return m_stalls; }           // ticks later than the threshold
    qint64 worstLagMs() const { return m_worstLagMs; }    // the latest tick, beyond its interval
    qint64 ticks() const { return m_ticks; }

signals:
    void stalled(qint64 lagMs);

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_sinceLastTick;
    const qint64 m_intervalMs;
    const qint64 m_thresholdMs;
    qint64 m_stalls = 0;
    qint64 m_worstLagMs = 0;
    qint64 m_ticks = 0;
};

}  // namespace brook
