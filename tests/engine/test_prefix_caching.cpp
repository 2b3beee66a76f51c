// Prefix caching end to end on the CPU backend with a tiny random model: greedy output identical
// with and without the cache (one at a time, batched, and under preemption), exact hit counts in
// the stats, the metrics and each request's output, eviction under a small KV cache, and a
// cancelled request leaving no references behind.
#include "engine_test_support.h"

#include "engine/tokenizer.h"

#include <QtTest>

#include <random>

using namespace brook;
using namespace brook::testsupport;

namespace {

LaunchOptions withCaching(bool enabled, int numKvBlocks = 0)
{
    LaunchOptions o = cpuOptions();
    o.enablePrefixCaching = enabled;
    o.numKvBlocks = numKvBlocks;
    return o;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// The cached tokens each request's last output reported.
struct Reported {
    Completion completion;
    int cachedTokens = -1;
    int promptTokens = 0;
};

Reported completeReporting(Engine& engine, GenerationRequest request)
{
    auto stream = RequestStream::submit(engine, std::move(request));
    if (!stream) qFatal("submit: %s", stream.error().c_str());
    Reported r;
    while (auto out = (*stream)->next()) {
        r.completion.tokens.insert(r.completion.tokens.end(), out->newTokenIds.begin(), out->newTokenIds.end());
        if (out->finishReason) r.completion.finish = out->finishReason;
        r.cachedTokens = out->numCachedTokens;
        r.promptTokens = out->numPromptTokens;
    }
    return r;
}

}  // namespace

class TestPrefixCaching : public QObject {
    Q_OBJECT
private slots:
    void onByDefault()
    {
        QVERIFY(LaunchOptions{}.enablePrefixCaching);
        QVERIFY(EngineConfig{}.enablePrefixCaching);
        auto engine = launch(cpuOptions());
        QVERIFY(engine->stats().prefixCachingEnabled);
    }

    void multiTurnGreedyIsIdenticalAndHitsAreExact()
    {
        // A chat: a shared system prompt, then each turn resends the history plus a question.
        // Block size 16, 8 new tokens per answer.
        auto plain = launch(withCaching(false));
        auto cached = launch(withCaching(true));
        std::mt19937 rng(21);
        const int vocab = plain->tokenizer().vocabSize();
        std::vector<int32_t> history = randomPrompt(rng, 100, vocab);
        long long expectedHits = 0, expectedQueries = 0;
        int expectedPreviousComputed = 0;
        for (int turn = 0; turn < 4; ++turn) {
            history = concat(history, randomPrompt(rng, 11 + turn, vocab));
            const Reported a = completeReporting(*plain, greedyRequest(history, 8));
            const Reported b = completeReporting(*cached, greedyRequest(history, 8));
            QCOMPARE(b.completion.tokens, a.completion.tokens);
            QCOMPARE(a.cachedTokens, 0);
            // What the previous turn computed (its prompt and 7 of its 8 answer tokens) is
            // cached in whole blocks; this turn's prompt repeats all of it.
            const int previousComputed = turn == 0 ? 0 : expectedPreviousComputed;
            const int expected = std::min(previousComputed / 16 * 16, (int(history.size()) - 1) / 16 * 16);
            QCOMPARE(b.cachedTokens, expected);
            expectedHits += expected;
            expectedQueries += int64_t(history.size());
            history = concat(history, b.completion.tokens);
            expectedPreviousComputed = int(history.size()) - 1;
        }
        const EngineStats stats = waitIdle(*cached);
        QCOMPARE(stats.prefixCacheHits, expectedHits);
        QCOMPARE(stats.prefixCacheQueries, expectedQueries);
        QVERIFY(expectedHits > 300);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
        const std::string metrics = cached->metrics().renderPrometheus();
        const std::string labels = "{model_name=\"" + cached->config().modelName + "\",engine=\"0\"}";
        QVERIFY(metrics.find("vllm:prefix_cache_queries_total" + labels + " " + std::to_string(expectedQueries) +
                             ".0\n") != std::string::npos);
        QVERIFY(metrics.find("vllm:prefix_cache_hits_total" + labels + " " + std::to_string(expectedHits) + ".0\n") !=
                std::string::npos);
        // Computed prompt tokens leave the cached ones out.
        QCOMPARE(stats.promptTokensTotal, expectedQueries - expectedHits);
        QCOMPARE(waitIdle(*plain).prefixCacheHits, 0LL);
    }

    void batchedSharedPrefixesAreIdentical()
    {
        // Sixteen requests over two system prompts, submitted together and in waves, with
        // sampling seeded: the same tokens as without the cache.
        auto plain = launch(withCaching(false));
        auto cached = launch(withCaching(true));
        std::mt19937 rng(8);
        const int vocab = plain->tokenizer().vocabSize();
        const std::vector<int32_t> systems[2] = {randomPrompt(rng, 70, vocab), randomPrompt(rng, 45, vocab)};
        std::vector<GenerationRequest> requests;
        for (int i = 0; i < 16; ++i) {
            GenerationRequest r = greedyRequest(concat(systems[i % 2], randomPrompt(rng, 3 + i, vocab)), 12 + i % 5);
            if (i % 3 == 0) {
                r.params.temperature = 0.8f;
                r.params.seed = uint64_t(i);
            }
            requests.push_back(r);
        }
        for (int wave = 0; wave < 2; ++wave) {
            std::vector<std::shared_ptr<RequestStream>> a, b;
            for (const auto& r : requests) {
                a.push_back(*RequestStream::submit(*plain, r));
                b.push_back(*RequestStream::submit(*cached, r));
            }
            for (size_t i = 0; i < requests.size(); ++i) QCOMPARE(drain(*b[i]).tokens, drain(*a[i]).tokens);
        }
        const EngineStats stats = waitIdle(*cached);
        QVERIFY2(stats.prefixCacheHits > 16 * 45, "the second wave should find every system prompt cached");
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }

    void preemptionWithCachingStaysExact()
    {
        std::mt19937 rng(5);
        auto plain = launch(withCaching(false));
        const int vocab = plain->tokenizer().vocabSize();
        const std::vector<int32_t> system = randomPrompt(rng, 40, vocab);
        std::vector<std::vector<int32_t>> prompts;
        for (int i = 0; i < 6; ++i) prompts.push_back(concat(system, randomPrompt(rng, 5 + 7 * i, vocab)));
        std::vector<Completion> expected;
        for (const auto& p : prompts) expected.push_back(complete(*plain, greedyRequest(p, 60)));
        plain.reset();

        auto engine = launch(withCaching(true, 14));  // 224 token slots for ~6 x 130 tokens
        for (int round = 0; round < 2; ++round) {
            std::vector<std::shared_ptr<RequestStream>> streams;
            for (const auto& p : prompts) streams.push_back(*RequestStream::submit(*engine, greedyRequest(p, 60)));
            for (size_t i = 0; i < streams.size(); ++i) QCOMPARE(drain(*streams[i]).tokens, expected[i].tokens);
        }
        const EngineStats stats = waitIdle(*engine);
        QVERIFY2(stats.numPreemptions > 0, "the small cache should have forced preemption");
        QVERIFY(stats.prefixCacheHits > 0);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }

    void evictionUnderASmallCacheIsLeastRecentlyUsedFirst()
    {
        // 12 blocks of 16 tokens. A (100-token prompt, 8 answer tokens) leaves 6 cached blocks;
        // B (150 tokens) needs 10 blocks: the 6 never-cached ones, then 4 of A's, its last
        // first. A again finds its first 2 blocks and answers the same.
        auto engine = launch(withCaching(true, 12));
        std::mt19937 rng(2);
        const int vocab = engine->tokenizer().vocabSize();
        const std::vector<int32_t> a = randomPrompt(rng, 100, vocab), b = randomPrompt(rng, 150, vocab);
        const Reported first = completeReporting(*engine, greedyRequest(a, 8));
        QCOMPARE(first.cachedTokens, 0);
        const Reported other = completeReporting(*engine, greedyRequest(b, 8));
        QCOMPARE(other.cachedTokens, 0);
        const Reported again = completeReporting(*engine, greedyRequest(a, 8));
        QCOMPARE(again.cachedTokens, 32);
        QCOMPARE(again.completion.tokens, first.completion.tokens);
        // B's 9 full blocks were cached after it; A's second run needed 5 blocks: B's partial
        // one, then B's last 4 cached ones. B's first 5 blocks are left.
        const Reported otherAgain = completeReporting(*engine, greedyRequest(b, 8));
        QCOMPARE(otherAgain.cachedTokens, 80);
        QCOMPARE(otherAgain.completion.tokens, other.completion.tokens);
        const EngineStats stats = waitIdle(*engine);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }

    void cancelledRequestsLeaveNoReferences()
    {
        auto engine = launch(withCaching(true));
        std::mt19937 rng(9);
        const int vocab = engine->tokenizer().vocabSize();
        const std::vector<int32_t> system = randomPrompt(rng, 64, vocab);
        complete(*engine, greedyRequest(system, 4));  // cache the system prompt
        // Each is cancelled while running on the shared blocks, from its callback at its first token.
        std::vector<CancelledAtFirstToken> requests;
        for (int i = 0; i < 4; ++i)
            requests.emplace_back(*engine, greedyRequest(concat(system, randomPrompt(rng, 20, vocab)), 400));
        for (const auto& r : requests) {
            const Completion c = r.wait();
            QVERIFY(c.finish);
            QCOMPARE(*c.finish, FinishReason::Abort);
            QCOMPARE(r.cachedTokens(), 64);  // it held the system prompt's cached blocks
        }
        const EngineStats stats = waitIdle(*engine);
        // Every block is free again (a held block never is), the cached ones evictable.
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
        QCOMPARE(stats.kvCacheUsage, 0.0);
        QCOMPARE(stats.requestsAborted, 4LL);
        // And the cache still serves: the system prompt is found again.
        const Reported after = completeReporting(*engine, greedyRequest(concat(system, {5, 6, 7}), 2));
        QCOMPARE(after.cachedTokens, 64);
    }
};

QTEST_GUILESS_MAIN(TestPrefixCaching)
#include "test_prefix_caching.moc"
