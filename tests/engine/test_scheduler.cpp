// Scheduler: token budget, chunked prefill, FCFS, max_num_seqs, preemption by recompute, and
// prefix caching (exact hit counts, writes only into blocks a sequence holds alone).
// The backend is simulated: after each step every sampled sequence gets one token.
#include "engine/scheduler.h"

#include <QtTest>

#include <numeric>
#include <random>

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

std::unique_ptr<Sequence> makeSeq(RequestId id, std::vector<int32_t> prompt)
{
    auto s = makeSeq(id, int(prompt.size()));
    s->tokens = std::move(prompt);
    return s;
}

std::vector<int32_t> iota(int n, int32_t first)
{
    std::vector<int32_t> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), first);
    return v;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
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

    void prefixHitsAreExactForCraftedPrefixes()
    {
        BlockManager blocks(64, 4, true);
        Scheduler scheduler({8, 1000, SchedulingPolicy::Fcfs}, blocks);
        const std::vector<int32_t> system = iota(10, 100);  // two full blocks and two tokens

        scheduler.add(makeSeq(1, system));
        SchedulerOutput p = runStep(scheduler);
        QCOMPARE(p.scheduled[0].numNewTokens, 10);  // nothing cached yet
        QCOMPARE(p.scheduled[0].seq->numCachedPromptTokens, 0);
        scheduler.finish(1);
        QCOMPARE(blocks.numCachedBlocks(), 2);

        // The system prompt plus a question: its two full blocks come from the cache.
        scheduler.add(makeSeq(2, concat(system, iota(5, 900))));
        p = runStep(scheduler);
        QCOMPARE(p.scheduled[0].numNewTokens, 15 - 8);
        QCOMPARE(p.numPrefillTokens, 7);
        QCOMPARE(p.scheduled[0].seq->numCachedPromptTokens, 8);
        QVERIFY(p.scheduled[0].sample);
        scheduler.finish(2);

        // Exactly the first two blocks: the second is cached but holds the last token.
        scheduler.add(makeSeq(3, iota(8, 100)));
        p = runStep(scheduler);
        QCOMPARE(p.scheduled[0].numNewTokens, 4);
        scheduler.finish(3);

        // A different first token: nothing in common, whatever follows.
        std::vector<int32_t> other = system;
        other[0] = 1;
        scheduler.add(makeSeq(4, other));
        p = runStep(scheduler);
        QCOMPARE(p.scheduled[0].numNewTokens, 10);
        scheduler.finish(4);

        QCOMPARE(scheduler.prefixCacheQueries(), 10LL + 15 + 8 + 10);
        QCOMPARE(scheduler.prefixCacheHits(), 0LL + 8 + 4 + 0);
        QCOMPARE(blocks.numFreeBlocks(), blocks.numTotalBlocks());
    }

    void generatedTokensAreCachedToo()
    {
        // A second turn repeats the first turn's prompt and answer: the answer's full blocks hit.
        BlockManager blocks(64, 4, true);
        Scheduler scheduler({8, 1000, SchedulingPolicy::Fcfs}, blocks);
        scheduler.add(makeSeq(1, iota(6, 100)));
        for (int i = 0; i < 7; ++i) runStep(scheduler);  // 6 + 7 tokens, 12 computed
        std::vector<int32_t> turn = scheduler.find(1)->tokens;
        QCOMPARE(int(turn.size()), 13);
        scheduler.finish(1);
        scheduler.add(makeSeq(2, concat(turn, iota(3, 900))));
        const SchedulerOutput p = runStep(scheduler);
        QCOMPARE(p.scheduled[0].seq->numCachedPromptTokens, 12);
        QCOMPARE(p.scheduled[0].numNewTokens, 16 - 12);
    }

    void cachingOffSchedulesEverything()
    {
        BlockManager blocks(64, 4);
        Scheduler scheduler({8, 1000, SchedulingPolicy::Fcfs}, blocks);
        scheduler.add(makeSeq(1, iota(10, 100)));
        runStep(scheduler);
        scheduler.finish(1);
        scheduler.add(makeSeq(2, iota(10, 100)));
        QCOMPARE(runStep(scheduler).scheduled[0].numNewTokens, 10);
        QCOMPARE(scheduler.prefixCacheHits(), 0LL);
        QCOMPARE(scheduler.prefixCacheQueries(), 20LL);
    }

    void sharedCachedBlocksAreNeverWritten()
    {
        // Many sequences over a few shared prefixes in a cache small enough to preempt and
        // evict. Every token a step computes must land in a block its sequence holds alone and
        // that is not cached (whole blocks only: no copy-on-write is ever needed).
        BlockManager blocks(24, 4, true);
        Scheduler scheduler({6, 20, SchedulingPolicy::Fcfs}, blocks);
        std::mt19937 rng(17);
        const std::vector<int32_t> bases[2] = {iota(30, 100), iota(30, 400)};
        RequestId next = 1;
        int finished = 0;
        long long written = 0;
        for (int step = 0; step < 600; ++step) {
            if (scheduler.numWaiting() < 3) {
                const auto& base = bases[rng() % 2];
                std::vector<int32_t> prompt(base.begin(), base.begin() + 3 + ptrdiff_t(rng() % 27));
                prompt.push_back(int32_t(1000 + rng() % 50));
                scheduler.add(makeSeq(next++, prompt));
            }
            SchedulerOutput p = scheduler.schedule();
            for (const ScheduledSequence& s : p.scheduled) {
                const int first = s.seq->numComputedTokens, last = first + s.numNewTokens - 1;
                for (int b = first / 4; b <= last / 4; ++b) {
                    const int32_t block = s.seq->blockTable[size_t(b)];
                    QCOMPARE(blocks.refCount(block), 1);
                    QVERIFY(!blocks.isCached(block));
                    ++written;
                }
            }
            scheduler.postStep(p);
            for (const auto& s : p.scheduled)
                if (s.sample) s.seq->tokens.push_back(int32_t(2000 + s.seq->numOutputTokens()));
            std::vector<RequestId> done;
            for (const auto& s : p.scheduled)
                if (s.seq->numOutputTokens() >= 6) done.push_back(s.seq->id);
            for (RequestId id : done) {
                scheduler.finish(id);
                ++finished;
            }
        }
        QVERIFY(finished > 100);
        QVERIFY(written > 0);
        QVERIFY2(scheduler.prefixCacheHits() > scheduler.prefixCacheQueries() / 4, "shared prefixes should hit");
        QVERIFY2(scheduler.numPreemptions() > 0, "the small cache should have forced preemption");
        while (scheduler.hasWork()) {
            Sequence* s = !scheduler.runningSequences().empty() ? scheduler.runningSequences().front().get()
                                                                : scheduler.waitingSequences().front().get();
            scheduler.finish(s->id);
        }
        QCOMPARE(blocks.numFreeBlocks(), blocks.numTotalBlocks());
        for (int32_t b = 0; b < blocks.numTotalBlocks(); ++b) QCOMPARE(blocks.refCount(b), 0);
    }

    void preemptedSequenceFindsItsOwnBlocksAgain()
    {
        BlockManager blocks(4, 4, true);
        Scheduler scheduler({8, 64, SchedulingPolicy::Fcfs}, blocks);
        scheduler.add(makeSeq(1, iota(6, 100)));
        scheduler.add(makeSeq(2, iota(6, 300)));
        SchedulerOutput p;
        do {
            p = runStep(scheduler);
        } while (p.preempted.empty());
        Sequence* victim = p.preempted[0];
        const int cachedBefore = victim->numCachedPromptTokens;
        // Preempted with 9 tokens, 8 computed in two cached blocks; seq 1 then needed one block
        // and evicted the victim's second (a sequence's later blocks go first), so one is left.
        const int tokens = victim->numTokens();
        QCOMPARE(tokens, 9);
        scheduler.finish(1);
        p = runStep(scheduler);
        QCOMPARE(p.scheduled[0].seq, victim);
        QCOMPARE(p.scheduled[0].numNewTokens, tokens - 4);
        QCOMPARE(victim->numCachedPromptTokens, cachedBefore);  // a preempted request is not queried twice
        QCOMPARE(scheduler.prefixCacheQueries(), 12LL);
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
