// RequestTracker and Engine::requests(): phases read off a simulated scheduler step by step
// (queued -> prefill -> decode, preempted after a preemption, prefill again for the recompute),
// time credited to the phase a request was in, and the engine's published table: sources, token
// counts, cancel by id, and an empty table once idle.
#include "engine_test_support.h"

#include "engine/request_tracker.h"
#include "engine/scheduler.h"
#include "engine/tokenizer.h"

#include <QtTest>

#include <random>

using namespace brook;
using namespace brook::testsupport;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<Sequence> makeSeq(RequestId id, int promptLength, Clock::time_point arrival)
{
    auto s = std::make_unique<Sequence>();
    s->id = id;
    s->tokens.assign(size_t(promptLength), 5);
    s->numPromptTokens = promptLength;
    s->arrivalTime = arrival;
    return s;
}

SchedulerOutput runStep(Scheduler& scheduler)
{
    SchedulerOutput plan = scheduler.schedule();
    scheduler.postStep(plan);
    for (const auto& s : plan.scheduled)
        if (s.sample) s.seq->tokens.push_back(7);
    return plan;
}

// A pointer into `all`, so never into a temporary: one from tracker.snapshot() is gone at the `;`.
const RequestSnapshot* find(const std::vector<RequestSnapshot>& all, RequestId id)
{
    for (const auto& r : all)
        if (r.id == id) return &r;
    return nullptr;
}
const RequestSnapshot* find(std::vector<RequestSnapshot>&& all, RequestId id) = delete;

}  // namespace

class TestRequestTracker : public QObject {
    Q_OBJECT
private slots:
    void phasesFollowTheScheduler()
    {
        BlockManager blocks(6, 4);  // 24 token slots
        Scheduler scheduler({/*maxNumSeqs*/ 1, /*maxNumBatchedTokens*/ 4, SchedulingPolicy::Fcfs}, blocks);
        RequestTracker tracker;
        Clock::time_point t = Clock::now();
        auto a = makeSeq(1, 6, t);
        auto b = makeSeq(2, 3, t + 1ms);
        tracker.onArrived(*a, "chat");
        tracker.onArrived(*b, "api");
        scheduler.add(std::move(a));
        scheduler.add(std::move(b));

        // Step 1: 4 of request 1's 6 prompt tokens; request 2 waits (max_num_seqs 1). The
        // scheduler stamps the first scheduling with the real clock; pin it to t + 4 ms.
        runStep(scheduler);
        scheduler.find(1)->firstScheduledTime = t + 4ms;
        t += 10ms;
        tracker.update(scheduler, t);
        auto snap = tracker.snapshot(t);
        QCOMPARE(int(snap.size()), 2);
        QCOMPARE(snap[0].id, RequestId(1));  // arrival order
        QCOMPARE(snap[0].source, std::string("chat"));
        QCOMPARE(snap[0].phase, RequestPhase::Prefill);
        QCOMPARE(snap[1].phase, RequestPhase::Queued);
        QCOMPARE(snap[1].source, std::string("api"));
        QCOMPARE(snap[0].promptTokens, 6);
        // Of the 10 ms before the update, 4 were spent queued and 6 in the prefill step.
        QVERIFY(qAbs(snap[0].secondsIn(RequestPhase::Queued) - 0.004) < 1e-6);
        QVERIFY(qAbs(snap[0].secondsIn(RequestPhase::Prefill) - 0.006) < 1e-6);

        // Step 2: the last 2 prompt tokens and the first sample (at t + 28 ms) -> decode.
        runStep(scheduler);
        scheduler.find(1)->firstTokenTime = t + 18ms;
        t += 20ms;
        tracker.update(scheduler, t);
        snap = tracker.snapshot(t + 5ms);
        QCOMPARE(find(snap, 1)->phase, RequestPhase::Decode);
        QCOMPARE(find(snap, 1)->generatedTokens, 1);
        QVERIFY(qAbs(find(snap, 1)->secondsIn(RequestPhase::Prefill) - 0.024) < 1e-6);  // 6 + 18 ms
        QVERIFY(qAbs(find(snap, 1)->secondsIn(RequestPhase::Decode) - 0.007) < 1e-6);   // 2 + 5 as of the snapshot
        QVERIFY(qAbs(find(snap, 2)->secondsIn(RequestPhase::Queued) - 0.034) < 1e-6);   // arrived 1 ms later
        QVERIFY(qAbs(find(snap, 1)->ageSeconds - 0.035) < 1e-6);

        // Decode until the cache (24 slots) runs out... with one sequence it never preempts, so
        // finish request 1 and let request 2 run.
        for (int i = 0; i < 5; ++i) runStep(scheduler);
        tracker.update(scheduler, t += 1ms);
        snap = tracker.snapshot(t);
        QCOMPARE(find(snap, 1)->generatedTokens, 6);
        scheduler.finish(1);
        tracker.onFinished(1);
        runStep(scheduler);
        tracker.update(scheduler, t += 1ms);
        snap = tracker.snapshot(t);
        QCOMPARE(int(snap.size()), 1);
        QCOMPARE(snap[0].phase, RequestPhase::Decode);  // 3 prompt tokens fit one step
    }

    void aPreemptedRequestShowsAsPreemptedThenRecomputes()
    {
        // 16 token slots and a 4-token budget: the two requests outgrow the cache, one is
        // preempted, and its recompute takes more than one step (so prefill is seen again).
        BlockManager blocks(4, 4);
        Scheduler scheduler({8, 4, SchedulingPolicy::Fcfs}, blocks);
        RequestTracker tracker;
        Clock::time_point t = Clock::now();
        for (RequestId id : {1, 2}) {
            auto s = makeSeq(id, 7, t + std::chrono::microseconds(id));
            tracker.onArrived(*s, "bench");
            scheduler.add(std::move(s));
        }
        std::vector<RequestPhase> seen;  // request 2's phases, repeats folded
        double preemptedSeconds = 0;
        for (int step = 0; step < 40; ++step) {
            runStep(scheduler);
            tracker.update(scheduler, t += 1ms);
            const std::vector<RequestSnapshot> requests = tracker.snapshot(t);  // r2 points into it
            const RequestSnapshot* r2 = find(requests, 2);
            QVERIFY(r2);
            if (seen.empty() || seen.back() != r2->phase) seen.push_back(r2->phase);
            preemptedSeconds = r2->secondsIn(RequestPhase::Preempted);
            if (r2->phase == RequestPhase::Preempted && find(requests, 1)) {
                QVERIFY(r2->preemptions >= 1);
                scheduler.finish(1);  // room for it to run again
                tracker.onFinished(1);
            }
            if (r2->phase == RequestPhase::Decode && seen.size() > 2) break;
        }
        const auto at = std::find(seen.begin(), seen.end(), RequestPhase::Preempted);
        QVERIFY2(at != seen.end(), "request 2 was never preempted");
        QVERIFY(std::find(at, seen.end(), RequestPhase::Prefill) != seen.end());  // the recompute
        QCOMPARE(seen.back(), RequestPhase::Decode);
        QVERIFY(preemptedSeconds > 0);
        QCOMPARE(QString(requestPhaseName(RequestPhase::Preempted)), QStringLiteral("preempted"));
    }

    // Request 0 must still be decoding when it is cancelled. A 4,000-token request on the tiny
    // model lasts ~1-2 s; if this thread is starved that long (CI's 2 cores beside a compile),
    // it ends by length first and the scenario runs again, up to 3 times.
    void theEnginePublishesItsRequests()
    {
        for (int attempt = 1;; ++attempt) {
            bool raced = false;
            publishesItsRequestsOnce(raced);
            if (QTest::currentTestFailed() || !raced) return;
            QVERIFY2(attempt < 3, "request 0 finished before its cancel in 3 attempts");
            qInfo("attempt %d: request 0 finished before its cancel; again", attempt);
        }
    }

private:
    // `raced`: request 0 ended by itself before the cancel reached it (nothing is checked after
    // that point then).
    void publishesItsRequestsOnce(bool& raced)
    {
        LaunchOptions o = cpuOptions();
        o.maxNumSeqs = 2;  // the third request queues
        o.maxModelLen = 4096;
        auto engine = launch(o);
        std::mt19937 rng(9);
        const int vocab = engine->tokenizer().vocabSize();
        std::vector<std::shared_ptr<RequestStream>> streams;
        const char* sources[] = {"chat", "api", "bench"};
        for (int i = 0; i < 3; ++i) {
            GenerationRequest r = greedyRequest(randomPrompt(rng, 12 + i, vocab), 4000);
            r.source = sources[i];
            streams.push_back(*RequestStream::submit(*engine, r));
        }
        std::vector<RequestSnapshot> table;
        for (QDeadlineTimer deadline(30000); !deadline.hasExpired(); QTest::qWait(5)) {
            table = engine->requests();
            if (table.size() == 3 && table[0].generatedTokens > 2) break;
        }
        QCOMPARE(int(table.size()), 3);
        QCOMPARE(table[0].source, std::string("chat"));
        QCOMPARE(table[1].source, std::string("api"));
        QCOMPARE(table[2].source, std::string("bench"));
        QCOMPARE(table[0].phase, RequestPhase::Decode);
        QCOMPARE(table[2].phase, RequestPhase::Queued);
        QCOMPARE(table[2].generatedTokens, 0);
        QCOMPARE(table[1].promptTokens, 13);
        QVERIFY(table[0].secondsIn(RequestPhase::Decode) > 0);
        QVERIFY(table[2].secondsIn(RequestPhase::Queued) >= table[0].secondsIn(RequestPhase::Queued));

        // Cancel by id: the queued one and a decoding one end with "abort" and leave the table.
        engine->cancel(table[2].id);
        engine->cancel(table[0].id);
        const Completion queued = drain(*streams[2]);
        const Completion decoding = drain(*streams[0]);
        if (decoding.finish && *decoding.finish == FinishReason::Length) {
            engine->cancel(table[1].id);
            drain(*streams[1]);
            raced = true;
            return;
        }
        QCOMPARE(*queued.finish, FinishReason::Abort);
        QVERIFY(queued.tokens.empty());
        QCOMPARE(*decoding.finish, FinishReason::Abort);
        QVERIFY(decoding.tokens.size() < 4000);
        bool gone = false;
        for (QDeadlineTimer deadline(30000); !gone && !deadline.hasExpired();) {
            const auto now = engine->requests();
            gone = !find(now, table[2].id) && !find(now, table[0].id);
            if (!gone) QTest::qWait(10);
        }
        QVERIFY(gone);
        engine->cancel(table[1].id);
        drain(*streams[1]);
        waitIdle(*engine);
        QTest::qWait(50);
        QVERIFY(engine->requests().empty());
    }
};

QTEST_APPLESS_MAIN(TestRequestTracker)
#include "test_request_tracker.moc"
