// LatencyWindow: percentiles over random samples against a sorted reference, old samples leaving
// the window, the per-kind sample cap, and the engine filling it (TTFT, ITL, E2E) through stats().
#include "engine_test_support.h"

#include "engine/latency_window.h"
#include "engine/tokenizer.h"

#include <QtTest>

#include <algorithm>
#include <random>

using namespace brook;
using namespace brook::testsupport;
using namespace std::chrono_literals;

class TestLatencyWindow : public QObject {
    Q_OBJECT
private slots:
    void percentilesMatchASortedReference()
    {
        std::mt19937 rng(42);
        std::uniform_real_distribution<double> value(0.001, 2.0);
        LatencyWindow window(60.0);
        const Clock::time_point t0 = Clock::now();
        std::vector<double> values;
        for (int i = 0; i < 501; ++i) {
            values.push_back(value(rng));
            window.record(LatencyKind::Ttft, values.back(), t0 + std::chrono::milliseconds(i));
        }
        std::sort(values.begin(), values.end());
        const LatencySummary s = window.summary(t0 + 1s);
        QCOMPARE(s.ttft.count, 501);
        QCOMPARE(s.ttft.p50, values[250]);                // 501 samples: rank 250 exactly
        QVERIFY(qAbs(s.ttft.p95 - values[475]) < 1e-12);  // 0.95 * 500 = 475
        QCOMPARE(s.itl.count, 0);
        QCOMPARE(s.e2e.count, 0);
        // Interpolation between ranks: [1, 2, 3, 4] -> p50 2.5, p95 3.85.
        QCOMPARE(LatencyWindow::percentile({4, 1, 3, 2}, 50), 2.5);
        QVERIFY(qAbs(LatencyWindow::percentile({4, 1, 3, 2}, 95) - 3.85) < 1e-12);
        QCOMPARE(LatencyWindow::percentile({}, 50), 0.0);
    }

    void oldSamplesLeaveTheWindow()
    {
        LatencyWindow window(10.0);
        const Clock::time_point t0 = Clock::now();
        window.record(LatencyKind::E2e, 5.0, t0);
        window.record(LatencyKind::E2e, 1.0, t0 + 8s);
        QCOMPARE(window.summary(t0 + 9s).e2e.count, 2);
        const LatencySummary later = window.summary(t0 + 12s);  // the first is 12 s old
        QCOMPARE(later.e2e.count, 1);
        QCOMPARE(later.e2e.p95, 1.0);
        QCOMPARE(window.summary(t0 + 30s).e2e.count, 0);
        QCOMPARE(later.windowSeconds, 10.0);
    }

    void eachKindKeepsAtMostMaxSamples()
    {
        LatencyWindow window(60.0, 100);
        const Clock::time_point t0 = Clock::now();
        for (int i = 0; i < 1000; ++i) window.record(LatencyKind::Itl, double(i), t0 + std::chrono::microseconds(i));
        const LatencySummary s = window.summary(t0 + 1ms);
        QCOMPARE(s.itl.count, 100);
        QCOMPARE(s.itl.p50, 949.5);  // the newest 100: 900..999
    }

    void theEngineRecordsTtftItlAndE2e()
    {
        auto engine = launch(cpuOptions());
        std::mt19937 rng(5);
        const int vocab = engine->tokenizer().vocabSize();
        std::vector<std::shared_ptr<RequestStream>> streams;
        for (int i = 0; i < 4; ++i)
            streams.push_back(*RequestStream::submit(*engine, greedyRequest(randomPrompt(rng, 20 + i, vocab), 10)));
        for (auto& s : streams) drain(*s);
        waitIdle(*engine);
        const EngineStats s = engine->stats();
        QCOMPARE(s.latency.ttft.count, 4);
        QCOMPARE(s.latency.itl.count, 4 * 9);  // 10 tokens: 9 gaps each
        QCOMPARE(s.latency.e2e.count, 4);
        QVERIFY(s.latency.ttft.p50 > 0);
        QVERIFY(s.latency.ttft.p95 >= s.latency.ttft.p50);
        QVERIFY(s.latency.e2e.p50 >= s.latency.ttft.p50);  // a request ends after its first token
        QVERIFY(s.latency.windowSeconds > 0);
        // Aborted requests are no end-to-end sample.
        const CancelledAtFirstToken longOne(*engine, greedyRequest(randomPrompt(rng, 10, vocab), 400));
        const Completion aborted = longOne.wait();
        QVERIFY(aborted.finish);
        QCOMPARE(*aborted.finish, FinishReason::Abort);
        waitIdle(*engine);
        QCOMPARE(engine->stats().latency.e2e.count, 4);
        QCOMPARE(engine->stats().latency.ttft.count, 5);
    }
};

QTEST_APPLESS_MAIN(TestLatencyWindow)
#include "test_latency_window.moc"
