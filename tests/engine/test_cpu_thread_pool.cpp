// CpuThreadPool: every item of every call runs exactly once, calls of different sizes follow each
// other without a gap (the ticket's generations keep a late worker from running an item of the
// next call with the previous call's function), workers that slept wake for new work, and a pool
// of one thread runs everything on the caller.
#include "engine/cpu/cpu_thread_pool.h"

#include <QtTest/QtTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace brook::cpu;

class TestCpuThreadPool : public QObject {
    Q_OBJECT

private slots:
    void everyItemRunsOnce()
    {
        CpuThreadPool pool(4);  // more threads than this machine's cores is allowed
        QCOMPARE(pool.threads(), 4);
        for (int call = 0; call < 3000; ++call) {
            const int n = 1 + (call * 7919) % 97;
            std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
            // Each call's own function: a stale one would see another call number.
            std::atomic<int> wrongCall{0};
            const int current = call;
            pool.run(n, [&hits, &wrongCall, &call, current](int i) {
                if (current != call) wrongCall.fetch_add(1);
                hits[static_cast<size_t>(i)].fetch_add(1);
            });
            QCOMPARE(wrongCall.load(), 0);
            for (int i = 0; i < n; ++i)
                QVERIFY2(hits[static_cast<size_t>(i)].load() == 1,
                         qPrintable(QString("call %1 item %2").arg(call).arg(i)));
        }
    }

    void workersWakeAfterSleeping()
    {
        CpuThreadPool pool(2);
        std::atomic<int> sum{0};
        pool.run(8, [&](int i) { sum += i; });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the spin: workers sleep
        std::vector<std::thread::id> who(64);
        const std::thread::id caller = std::this_thread::get_id();
        std::atomic<bool> workerTookOne{false};
        // The caller's items wait (10 s at most) until a worker has taken one: on a loaded machine
        // the woken worker may get a core only after the caller alone could have run all 64.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        pool.run(64, [&](int i) {
            sum += i;
            who[size_t(i)] = std::this_thread::get_id();
            if (who[size_t(i)] != caller) workerTookOne = true;
            while (!workerTookOne && std::chrono::steady_clock::now() < until) std::this_thread::yield();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        });
        QCOMPARE(sum.load(), 28 + 2016);
        // The woken worker takes some (a correctness check, not a timing one: the caller alone
        // would also finish, after the wait above, with every id its own).
        bool workerHelped = false;
        for (const auto& id : who) workerHelped = workerHelped || id != std::this_thread::get_id();
        QVERIFY(workerHelped);
    }

    void oneThreadRunsOnTheCaller()
    {
        CpuThreadPool pool(1);
        QCOMPARE(pool.threads(), 1);
        std::vector<std::thread::id> who(5);
        pool.run(5, [&](int i) { who[size_t(i)] = std::this_thread::get_id(); });
        for (const auto& id : who) QCOMPARE(id, std::this_thread::get_id());
    }
};

QTEST_APPLESS_MAIN(TestCpuThreadPool)
#include "test_cpu_thread_pool.moc"
