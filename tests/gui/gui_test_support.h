// Shared by the GUI tests: the tiny random-weight model of the engine tests, an engine on it with
// room for long replies, and waiting helpers that keep the event loop running.
#pragma once

#include "../engine/engine_test_support.h"

#include <QElapsedTimer>
#include <QtTest>

#include <functional>

namespace brook::guitest {

inline LaunchOptions chatOptions()
{
    LaunchOptions o = testsupport::cpuOptions();
    o.maxModelLen = 4096;  // replies long enough to stop half-way
    o.cpuKvCacheBytes = 64LL << 20;
    return o;
}

// Runs the event loop until `done` or the timeout; returns whether `done` became true.
inline bool waitFor(const std::function<bool()>& done, int timeoutMs = 20000)
{
    QElapsedTimer timer;
    timer.start();
    while (!done()) {
        if (timer.elapsed() > timeoutMs) return false;
        QTest::qWait(5);
    }
    return true;
}

}  // namespace brook::guitest
