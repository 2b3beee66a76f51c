// EventLoopLagMonitor: a GUI thread blocked for 400 ms is reported as one stall of about that
// length; an idle event loop reports none. (The margins are wide: a loaded CI machine delays a
// 50 ms timer by tens of milliseconds, never by a blocked 400 ms.)
#include "gui/shell/event_loop_lag_monitor.h"

#include <QSignalSpy>
#include <QThread>
#include <QtTest>

using namespace brook;
using namespace std::chrono_literals;

class TestEventLoopLagMonitor : public QObject {
    Q_OBJECT

private slots:
    void aBlockedLoopIsOneStallOfItsLength()
    {
        EventLoopLagMonitor monitor(50ms, 200ms);
        QSignalSpy stalled(&monitor, &EventLoopLagMonitor::stalled);
        QTRY_VERIFY(monitor.ticks() >= 2);
        QTimer::singleShot(0, [] { QThread::msleep(400); });  // the GUI thread does not return for 400 ms
        QTRY_COMPARE_WITH_TIMEOUT(stalled.count(), 1, 5000);
        const qint64 lag = stalled.at(0).at(0).toLongLong();
        QVERIFY2(lag >= 300, qPrintable(QString::number(lag)));
        QCOMPARE(monitor.stalls(), 1);
        QVERIFY(monitor.worstLagMs() >= lag);
    }

    void anIdleLoopHasNone()
    {
        EventLoopLagMonitor monitor(50ms, 200ms);
        QTest::qWait(600);
        QVERIFY(monitor.ticks() >= 5);
        QCOMPARE(monitor.stalls(), 0);
    }
};

QTEST_MAIN(TestEventLoopLagMonitor)
#include "test_event_loop_lag_monitor.moc"
