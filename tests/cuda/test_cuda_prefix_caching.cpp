// Prefix caching on the CUDA backend: greedy output identical with and without the cache (a
// multi-turn chat, batched shared prefixes, and under preemption with a small KV cache), exact hit
// counts, a cancelled request leaving every block free, and the decode path (CUDA graphs) reading
// blocks another sequence computed. The engine-side logic is the same as on the CPU
// (tests/engine/test_prefix_caching.cpp); this checks that the GPU's prefill from an offset
// (positions and block table as if the prefix had been computed) gives the same tokens.
#include "cuda_engine_test_support.h"
#include "cuda_test_support.h"

#include "../engine/engine_test_support.h"

#include <random>

using namespace brook;
using namespace brook::cudatest;

namespace {

LaunchOptions gpuOptions(bool caching, int numKvBlocks = 0)
{
    LaunchOptions o = testsupport::cpuOptions();
    o.modelDir = gpuModelDir();
    o.device = "cuda";
    o.gpuMemoryUtilization = 0.3;
    o.enablePrefixCaching = caching;
    o.numKvBlocks = numKvBlocks;
    return o;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

struct Answer {
    std::vector<int32_t> tokens;
    int cachedTokens = -1;
};

Answer answer(Engine& engine, GenerationRequest request)
{
    auto stream = RequestStream::submit(engine, std::move(request));
    if (!stream) qFatal("submit: %s", stream.error().c_str());
    Answer a;
    while (auto out = (*stream)->next()) {
        a.tokens.insert(a.tokens.end(), out->newTokenIds.begin(), out->newTokenIds.end());
        a.cachedTokens = out->numCachedTokens;
    }
    return a;
}

}  // namespace

class TestCudaPrefixCaching : public QObject {
    Q_OBJECT
private slots:
    void multiTurnGreedyIsIdenticalWithExactHits()
    {
        BROOK_REQUIRE_GPU();
        auto plain = testsupport::launch(gpuOptions(false));
        auto cached = testsupport::launch(gpuOptions(true));
        std::mt19937 rng(21);
        const int vocab = plain->tokenizer().vocabSize();
        std::vector<int32_t> history = testsupport::randomPrompt(rng, 100, vocab);
        int previousComputed = 0;
        long long hits = 0;
        for (int turn = 0; turn < 5; ++turn) {
            history = concat(history, testsupport::randomPrompt(rng, 9 + turn, vocab));
            const Answer a = answer(*plain, testsupport::greedyRequest(history, 24));
            const Answer b = answer(*cached, testsupport::greedyRequest(history, 24));
            QCOMPARE(b.tokens, a.tokens);
            // Whole 16-token blocks of what the previous turn computed, never the last prompt token.
            const int expected = std::min(previousComputed / 16 * 16, (int(history.size()) - 1) / 16 * 16);
            QCOMPARE(b.cachedTokens, expected);
            hits += expected;
            history = concat(history, b.tokens);
            previousComputed = int(history.size()) - 1;
        }
        const EngineStats stats = testsupport::waitIdle(*cached);
        QCOMPARE(stats.prefixCacheHits, hits);
        QVERIFY(hits > 300);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }

    void batchedSharedPrefixesAreIdentical()
    {
        // Decode batches (CUDA graphs) mixing sequences that share cached blocks.
        BROOK_REQUIRE_GPU();
        auto plain = testsupport::launch(gpuOptions(false));
        auto cached = testsupport::launch(gpuOptions(true));
        std::mt19937 rng(8);
        const int vocab = plain->tokenizer().vocabSize();
        const std::vector<int32_t> system = testsupport::randomPrompt(rng, 70, vocab);
        std::vector<GenerationRequest> requests;
        for (int i = 0; i < 24; ++i)
            requests.push_back(
                testsupport::greedyRequest(concat(system, testsupport::randomPrompt(rng, 2 + i, vocab)), 20 + i % 7));
        for (int wave = 0; wave < 2; ++wave) {
            std::vector<std::shared_ptr<RequestStream>> a, b;
            for (const auto& r : requests) {
                a.push_back(*RequestStream::submit(*plain, r));
                b.push_back(*RequestStream::submit(*cached, r));
            }
            for (size_t i = 0; i < requests.size(); ++i)
                QCOMPARE(testsupport::drain(*b[i]).tokens, testsupport::drain(*a[i]).tokens);
        }
        const EngineStats stats = testsupport::waitIdle(*cached);
        QVERIFY2(stats.prefixCacheHits >= 24 * 64, "the second wave should find the system prompt cached");
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }

    void preemptionAndCancellationWithCachingStayExact()
    {
        BROOK_REQUIRE_GPU();
        std::mt19937 rng(41);
        std::vector<std::vector<int32_t>> prompts;
        std::vector<std::vector<int32_t>> expected;
        const std::vector<int32_t> system = testsupport::randomPrompt(rng, 40, 2000);
        {
            auto engine = testsupport::launch(gpuOptions(false));
            for (int i = 0; i < 6; ++i)
                prompts.push_back(concat(system, testsupport::randomPrompt(rng, 5 + 7 * i, 2000)));
            for (const auto& p : prompts)
                expected.push_back(testsupport::complete(*engine, testsupport::greedyRequest(p, 60)).tokens);
        }
        auto engine = testsupport::launch(gpuOptions(true, 14));
        for (int round = 0; round < 2; ++round) {
            std::vector<std::shared_ptr<RequestStream>> streams;
            for (const auto& p : prompts)
                streams.push_back(*RequestStream::submit(*engine, testsupport::greedyRequest(p, 60)));
            for (size_t i = 0; i < streams.size(); ++i) QCOMPARE(testsupport::drain(*streams[i]).tokens, expected[i]);
        }
        auto victim = *RequestStream::submit(*engine, testsupport::greedyRequest(concat(system, {7, 8, 9}), 150));
        QVERIFY(victim->next().has_value());
        victim->cancel();
        QCOMPARE(*testsupport::drain(*victim).finish, FinishReason::Abort);
        const EngineStats stats = testsupport::waitIdle(*engine);
        QVERIFY(stats.numPreemptions > 0);
        QVERIFY(stats.prefixCacheHits > 0);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }
};

QTEST_MAIN(TestCudaPrefixCaching)
#include "test_cuda_prefix_caching.moc"
