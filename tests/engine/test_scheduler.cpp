// Scheduler: token budget, chunked prefill, FCFS, max_num_seqs, preemption by recompute.
// The backend is simulated: after each step every sampled sequence gets one token.
#include "engine/scheduler.h"

#include <QtTest>

using namespace brook;

namespace {

std::unique_ptr<Sequence> makeSeq(RequestId id, int promptLength)
{
    auto s = std::make_unique<Sequence>();
    s->id = id;
    s->tokens.assign(size_t(promptLength), 5);
    s->numPromptTokens = promptLength;
    s->arrivalTime = Clock::now() + std::chrono::microseconds(id);  // strictly ordered arrivals
    return s;
}

// Runs one simulated step; returns the plan.
SchedulerOutput runStep(Scheduler& scheduler)
{
    SchedulerOutput plan = scheduler.schedule();
    scheduler.postStep(plan);
    for (const auto& s : plan.scheduled)
        if (s.sample) s.seq->tokens.push_back(7);
    return plan;
}

}  // namespace

class TestScheduler : public QObject {
    Q_OBJECT
private slots:
    void tightBudgetChunksPrefillInOrder()
    {
        BlockManager blocks(100, 16);
        Scheduler scheduler({/*maxNumSeqs*/ 8, /*maxNumBatchedTokens*/ 8, SchedulingPolicy::Fcfs}, blocks);
        scheduler.add(makeSeq(1, 20));
        scheduler.add(makeSeq(2, 5));
        scheduler.add(makeSeq(3, 3));

        SchedulerOutput p1 = runStep(scheduler);
        QCOMPARE(p1.numScheduledTokens, 8);
        QCOMPARE(int(p1.scheduled.size()), 1);
        QCOMPARE(p1.scheduled[0].seq->id, RequestId(1));
        QVERIFY(!p1.scheduled[0].sample);

        SchedulerOutput p2 = runStep(scheduler);
        QCOMPARE(p2.numScheduledTokens, 8);
        QCOMPARE(p2.scheduled[0].numNewTokens, 8);

        // 4 prompt tokens of seq 1 finish its prefill (sample), then seq 2 gets the other 4.
        SchedulerOutput p3 = runStep(scheduler);
        QCOMPARE(int(p3.scheduled.size()), 2);
        QCOMPARE(p3.scheduled[0].numNewTokens, 4);
        QVERIFY(p3.scheduled[0].sample);
        QCOMPARE(p3.scheduled[1].seq->id, RequestId(2));
        QCOMPARE(p3.scheduled[1].numNewTokens, 4);
        QVERIFY(!p3.scheduled[1].sample);

        // Decode of 1, last prompt token of 2 (sample), all of 3: 1 + 1 + 3 = 5 <= 8.
        SchedulerOutput p4 = runStep(scheduler);
        QCOMPARE(p4.numScheduledTokens, 5);
        QCOMPARE(int(p4.scheduled.size()), 3);
        for (const auto& s : p4.scheduled) QVERIFY(s.sample);
        for (int i = 0; i < 20; ++i) QVERIFY(runStep(scheduler).numScheduledTokens <= 8);
    }

    void respectsMaxNumSeqs()
    {
        BlockManager blocks(100, 16);
        Scheduler scheduler({2, 1000, SchedulingPolicy::Fcfs}, blocks);
        for (int i = 1; i <= 5; ++i) scheduler.add(makeSeq(RequestId(i), 4));
        SchedulerOutput p = runStep(scheduler);
        QCOMPARE(int(p.scheduled.size()), 2);
        QCOMPARE(scheduler.numRunning(), 2);
        QCOMPARE(scheduler.numWaiting(), 3);
        scheduler.finish(1);
        p = runStep(scheduler);
        QCOMPARE(int(p.scheduled.size()), 2);  // seq 2 decodes, seq 3 joins
        QCOMPARE(p.scheduled[1].seq->id, RequestId(3));
    }

    void preemptsLatestByRecomputeAndFreesEverything()
    {
        // 4 blocks of 4 tokens = 16 slots; two sequences of 6 prompt tokens grow until one
        // must give way.
        BlockManager blocks(4, 4);
        Scheduler scheduler({8, 64, SchedulingPolicy::Fcfs}, blocks);
        scheduler.add(makeSeq(1, 6));
        scheduler.add(makeSeq(2, 6));
        bool sawPreemption = false;
        // Six steps: seq 1 reaches 12 tokens, within the 16 slots once seq 2 has given way.
        for (int step = 0; step < 6; ++step) {
            SchedulerOutput p = runStep(scheduler);
            if (!p.preempted.empty()) {
                sawPreemption = true;
                QCOMPARE(p.preempted[0]->id, RequestId(2));      // the later arrival gives way
                QCOMPARE(p.preempted[0]->numComputedTokens, 0);  // recompute from scratch
                QVERIFY(p.preempted[0]->blockTable.empty());
                QVERIFY(p.preempted[0]->numOutputTokens() > 0);  // keeps what it generated
            }
        }
        QVERIFY(sawPreemption);
        QVERIFY(scheduler.numPreemptions() >= 1);
        scheduler.finish(1);
        scheduler.finish(2);
        QCOMPARE(blocks.numFreeBlocks(), blocks.numTotalBlocks());
        QVERIFY(!scheduler.hasWork());
    }

    void preemptedSequenceResumesFirst()
    {
        BlockManager blocks(4, 4);
        Scheduler scheduler({8, 64, SchedulingPolicy::Fcfs}, blocks);
        scheduler.add(makeSeq(1, 6));
        scheduler.add(makeSeq(2, 6));
        SchedulerOutput p;
        do {
            p = runStep(scheduler);
        } while (p.preempted.empty());
        scheduler.add(makeSeq(3, 2));
        scheduler.finish(1);  // memory comes back
        p = runStep(scheduler);
        QVERIFY(!p.scheduled.empty());
        QCOMPARE(p.scheduled[0].seq->id, RequestId(2));  // ahead of the newer seq 3
        // It recomputes everything it had (runStep has since appended one sampled token).
        QCOMPARE(p.scheduled[0].numNewTokens, p.scheduled[0].seq->numTokens() - 1);
    }

    void priorityPolicyOrdersWaiting()
    {
        BlockManager blocks(100, 16);
        Scheduler scheduler({1, 1000, SchedulingPolicy::Priority}, blocks);
        auto low = makeSeq(1, 4);
        low->priority = 5;
        auto high = makeSeq(2, 4);
        high->priority = -1;
        scheduler.add(std::move(low));
        scheduler.add(std::move(high));
        SchedulerOutput p = runStep(scheduler);
        QCOMPARE(p.scheduled[0].seq->id, RequestId(2));
    }
};

QTEST_APPLESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
