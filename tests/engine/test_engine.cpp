// Engine on the CPU backend with a tiny random model: batch invariance, seeded sampling,
// preemption, cancellation, max_model_len rejection, stop strings and stop tokens, the step-time
// accounting, and the KV cache returning to full after every request.
#include "engine_test_support.h"

#include "engine/tokenizer.h"

#include <QtTest>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>

using namespace brook;
using namespace brook::testsupport;

namespace {

// Submits `requests` with one submitAll and waits for all of them to finish: the number of
// tokens each one generated, or why the submit failed, returned too few ids or timed out.
Result<std::vector<int>> generateTogether(Engine& engine, const std::vector<GenerationRequest>& requests)
{
    std::mutex mutex;
    std::condition_variable done;
    std::vector<int> generated(requests.size(), 0);
    size_t finished = 0;
    auto ids = engine.submitAll(requests, [&](size_t i) {
        return OutputCallback([&, i](const RequestOutput& out) {
            std::lock_guard lock(mutex);
            generated[i] += int(out.newTokenIds.size());
            if (out.finished()) {
                ++finished;
                done.notify_all();
            }
        });
    });
    if (!ids) return makeError(ids.error());
    if (ids->size() != requests.size())
        return makeError("submitAll returned " + std::to_string(ids->size()) + " ids for " +
                         std::to_string(requests.size()) + " requests");
    std::unique_lock lock(mutex);
    if (!done.wait_for(lock, std::chrono::seconds(60), [&] { return finished == requests.size(); }))
        return makeError("the requests did not finish within 60 s");
    return generated;
}

}  // namespace

class TestEngine : public QObject {
    Q_OBJECT
private slots:
    void greedyIsBatchInvariant()
    {
        auto engine = launch(cpuOptions());
        std::mt19937 rng(11);
        const int vocab = engine->tokenizer().vocabSize();
        const std::vector<int32_t> prompt = randomPrompt(rng, 37, vocab);
        const Completion alone = complete(*engine, greedyRequest(prompt, 40));
        QCOMPARE(int(alone.tokens.size()), 40);
        QCOMPARE(*alone.finish, FinishReason::Length);

        // The same request among 15 others of different lengths and sampling settings.
        std::vector<std::shared_ptr<RequestStream>> others;
        for (int i = 0; i < 15; ++i) {
            GenerationRequest r = greedyRequest(randomPrompt(rng, 5 + 9 * i, vocab), 30 + i);
            if (i % 2) {
                r.params.temperature = 0.9f;
                r.params.seed = uint64_t(i);
            }
            others.push_back(*RequestStream::submit(*engine, r));
            if (i == 7) others.push_back(*RequestStream::submit(*engine, greedyRequest(prompt, 40)));
        }
        std::vector<Completion> results;
        for (auto& s : others) results.push_back(drain(*s));
        QCOMPARE(results[8].tokens, alone.tokens);
        QCOMPARE(results[8].text, alone.text);
        const EngineStats stats = waitIdle(*engine);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }

    void stepTimesAccountForTheRun()
    {
        auto engine = launch(cpuOptions());
        std::mt19937 rng(5);
        const int vocab = engine->tokenizer().vocabSize();
        const EngineStats before = waitIdle(*engine);
        const auto start = std::chrono::steady_clock::now();
        std::vector<GenerationRequest> requests;
        for (int i = 0; i < 4; ++i) requests.push_back(greedyRequest(randomPrompt(rng, 9 + i, vocab), 20));
        // submitAll hands the four to the engine together, so the step counts below hold however
        // loaded the machine is (separate submits let the engine start on the first one alone).
        auto generated = generateTogether(*engine, requests);
        QVERIFY2(generated.ok(), generated.ok() ? "" : generated.error().c_str());
        for (int n : *generated) QCOMPARE(n, 20);
        const EngineStats after = waitIdle(*engine);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

        // One step prefills all four and samples their first tokens; 19 decode steps of 4 rows follow.
        const EngineStepTimes& a = after.stepTimes;
        const EngineStepTimes& b = before.stepTimes;
        QCOMPARE(after.steps - before.steps, 20LL);
        QCOMPARE(a.decodeSteps - b.decodeSteps, 19LL);
        QCOMPARE(a.decodeRows - b.decodeRows, 76LL);
        const double backend = a.backendSeconds - b.backendSeconds;
        const double decode = a.decodeBackendSeconds - b.decodeBackendSeconds;
        const double parts = backend + (a.scheduleSeconds - b.scheduleSeconds) + (a.outputSeconds - b.outputSeconds) +
                             (a.bookkeepingSeconds - b.bookkeepingSeconds);
        QVERIFY(decode > 0.0 && decode < backend);  // the prefill step is the rest
        QVERIFY2(parts <= wall, qPrintable(QString("engine thread %1 s in a %2 s run").arg(parts).arg(wall)));
    }

    void seededSamplingIsReproducibleAloneOrBatched()
    {
        auto engine = launch(cpuOptions());
        std::mt19937 rng(3);
        const int vocab = engine->tokenizer().vocabSize();
        GenerationRequest r = greedyRequest(randomPrompt(rng, 20, vocab), 30);
        r.params.temperature = 1.0f;
        r.params.topP = 0.9f;
        r.params.seed = 1234;
        const Completion a = complete(*engine, r);
        std::vector<std::shared_ptr<RequestStream>> batch;
        for (int i = 0; i < 6; ++i) {
            GenerationRequest other = greedyRequest(randomPrompt(rng, 10 + i, vocab), 25);
            other.params.temperature = 1.0f;
            batch.push_back(*RequestStream::submit(*engine, other));
        }
        auto same = *RequestStream::submit(*engine, r);
        r.params.seed = 99;
        auto different = *RequestStream::submit(*engine, r);
        const Completion b = drain(*same);
        const Completion c = drain(*different);
        for (auto& s : batch) drain(*s);
        QCOMPARE(b.tokens, a.tokens);
        QVERIFY(c.tokens != a.tokens);
    }

    void preemptionGivesTheSameGreedyOutput()
    {
        std::mt19937 rng(5);
        std::vector<std::vector<int32_t>> prompts;
        auto big = launch(cpuOptions());
        const int vocab = big->tokenizer().vocabSize();
        for (int i = 0; i < 6; ++i) prompts.push_back(randomPrompt(rng, 20 + 7 * i, vocab));
        std::vector<Completion> expected;
        for (const auto& p : prompts) expected.push_back(complete(*big, greedyRequest(p, 60)));
        big.reset();

        LaunchOptions small = cpuOptions();
        small.numKvBlocks = 12;  // 192 token slots for ~6 x 100 tokens: preemption is certain
        auto engine = launch(small);
        std::vector<std::shared_ptr<RequestStream>> streams;
        for (const auto& p : prompts) streams.push_back(*RequestStream::submit(*engine, greedyRequest(p, 60)));
        for (size_t i = 0; i < streams.size(); ++i) QCOMPARE(drain(*streams[i]).tokens, expected[i].tokens);
        const EngineStats stats = waitIdle(*engine);
        QVERIFY2(stats.numPreemptions > 0, "the small cache should have forced preemption");
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
        QVERIFY(engine->metrics().renderPrometheus().find("vllm:num_preemptions_total") != std::string::npos);
    }

    void cancellationFreesEveryBlock()
    {
        auto engine = launch(cpuOptions());
        std::mt19937 rng(9);
        const int vocab = engine->tokenizer().vocabSize();
        // Each is cancelled while running, from its callback at its first token.
        std::vector<CancelledAtFirstToken> requests;
        for (int i = 0; i < 4; ++i) requests.emplace_back(*engine, greedyRequest(randomPrompt(rng, 30, vocab), 400));
        for (const auto& r : requests) {
            const Completion c = r.wait();
            QVERIFY(c.finish);
            QCOMPARE(*c.finish, FinishReason::Abort);
            QVERIFY(c.tokens.size() < 400);
        }
        const EngineStats stats = waitIdle(*engine);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
        QCOMPARE(stats.requestsAborted, 4LL);
        QVERIFY(engine->metrics().renderPrometheus().find("finished_reason=\"abort\"} 4") != std::string::npos);
    }

    // submitAll: the engine sees the requests together, so one step prefills them all and every
    // decode step carries all of them (one-by-one submits race the engine thread, which may start
    // stepping the first alone). A bad request rejects the whole call, naming its index, and
    // queues nothing.
    void submitAllSchedulesTheRequestsTogether()
    {
        auto engine = launch(cpuOptions());
        std::mt19937 rng(17);
        const int vocab = engine->tokenizer().vocabSize();
        constexpr int kRequests = 6, kTokens = 10;
        const EngineStats before = waitIdle(*engine);
        std::vector<GenerationRequest> requests;
        for (int i = 0; i < kRequests; ++i) requests.push_back(greedyRequest(randomPrompt(rng, 9 + i, vocab), kTokens));
        auto generated = generateTogether(*engine, requests);
        QVERIFY2(generated.ok(), generated.ok() ? "" : generated.error().c_str());
        for (int n : *generated) QCOMPARE(n, kTokens);
        const EngineStats after = waitIdle(*engine);
        QCOMPARE(after.steps - before.steps, (long long)kTokens);  // one prefill step, then decode steps
        const long long decodeSteps = after.stepTimes.decodeSteps - before.stepTimes.decodeSteps;
        QCOMPARE(decodeSteps, (long long)kTokens - 1);
        QCOMPARE(after.stepTimes.decodeRows - before.stepTimes.decodeRows, decodeSteps * kRequests);

        std::vector<GenerationRequest> bad;
        for (int i = 0; i < 3; ++i) bad.push_back(greedyRequest({5, 6, 7}, 4));
        bad[1].params.topP = 1.5f;
        auto rejected = engine->submitAll(bad, [](size_t) { return OutputCallback([](const RequestOutput&) {}); });
        QVERIFY(!rejected.ok());
        QVERIFY2(rejected.error().find("request 1: ") != std::string::npos, rejected.error().c_str());
        QVERIFY(rejected.error().find("top_p") != std::string::npos);
        QCOMPARE(waitIdle(*engine).steps, after.steps);  // nothing of it ran
    }

    void rejectsRequestsLongerThanMaxModelLen()
    {
        LaunchOptions o = cpuOptions();
        o.maxModelLen = 64;
        auto engine = launch(o);
        std::mt19937 rng(1);
        auto r = engine->submit(greedyRequest(randomPrompt(rng, 50, 500), 20), [](const RequestOutput&) {});
        QVERIFY(!r.ok());
        QVERIFY2(r.error().find("maximum context length is 64 tokens") != std::string::npos, r.error().c_str());
        QVERIFY(r.error().find("70 tokens (50 in the messages, 20 in the completion)") != std::string::npos);
        auto empty = engine->submit(greedyRequest({}, 5), [](const RequestOutput&) {});
        QVERIFY(!empty.ok());
        auto badId = engine->submit(greedyRequest({1, 2, 999999}, 5), [](const RequestOutput&) {});
        QVERIFY(!badId.ok());
        GenerationRequest badParams = greedyRequest({5, 6}, 5);
        badParams.params.topP = 1.5f;
        auto bad = engine->submit(badParams, [](const RequestOutput&) {});
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().find("top_p") != std::string::npos);
        // It still serves after the rejections.
        QCOMPARE(int(complete(*engine, greedyRequest({5, 6, 7}, 4)).tokens.size()), 4);
    }

    void stopStringAcrossTokensAndStopTokenIds()
    {
        auto engine = launch(cpuOptions());
        GenerationRequest r;
        r.prompt = std::string("The river runs");
        r.params.temperature = 0.0f;
        r.params.maxTokens = 40;
        r.params.ignoreEos = true;
        const Completion full = complete(*engine, r);
        QCOMPARE(int(full.tokens.size()), 40);

        // Pick a stop string that starts inside one token's text and ends inside a later one.
        const Tokenizer& tok = engine->tokenizer();
        std::vector<size_t> boundaries;  // text length after each token
        for (size_t i = 1; i <= full.tokens.size(); ++i)
            boundaries.push_back(tok.decode(std::span(full.tokens.data(), i), true).size());
        size_t start = 0, end = 0;
        for (size_t i = 2; i + 2 < boundaries.size() && end == 0; ++i) {
            const size_t a = boundaries[i - 1], b = boundaries[i], c = boundaries[i + 1];
            if (b > a + 1 && c > b) {
                start = a + 1;  // inside token i
                end = c;        // through token i + 1
            }
        }
        QVERIFY2(end > start, "needs two multi-character tokens in a row");
        const std::string stop = full.text.substr(start, end - start);
        if (full.text.find(stop) != start) QSKIP("stop string occurs earlier in the text");
        r.params.stop = {stop};
        const Completion stopped = complete(*engine, r);
        QCOMPARE(*stopped.finish, FinishReason::Stop);
        QCOMPARE(stopped.stopReason, stop);
        QCOMPARE(stopped.text, full.text.substr(0, start));

        r.params.stop.clear();
        r.params.includeStopStrInOutput = false;
        size_t k = 4;
        while (k < full.tokens.size() && std::find(full.tokens.begin(), full.tokens.begin() + long(k),
                                                   full.tokens[k]) != full.tokens.begin() + long(k))
            ++k;
        QVERIFY(k < full.tokens.size());
        r.params.stopTokenIds = {full.tokens[k]};
        const Completion byToken = complete(*engine, r);
        QCOMPARE(*byToken.finish, FinishReason::Stop);
        QCOMPARE(int(byToken.tokens.size()), int(k) + 1);
        QCOMPARE(byToken.stopReason, std::to_string(full.tokens[k]));
    }

    void chatPromptsAndLogprobs()
    {
        auto engine = launch(cpuOptions());
        GenerationRequest r;
        r.prompt = std::vector<ChatMessage>{{"system", "Be brief."}, {"user", "你好，世界"}};
        r.params.temperature = 0.0f;
        r.params.maxTokens = 8;
        r.params.ignoreEos = true;
        r.params.logprobs = 3;
        const Completion c = complete(*engine, r);
        QCOMPARE(int(c.logprobs.size()), 8);
        for (size_t i = 0; i < c.logprobs.size(); ++i) {
            QCOMPARE(c.logprobs[i].token, c.tokens[i]);
            QCOMPARE(int(c.logprobs[i].top.size()), 3);
            QVERIFY(c.logprobs[i].logprob <= 0.0f);
            // Greedy picks the most likely token, so it is the first of the top-N.
            QCOMPARE(c.logprobs[i].top[0].token, c.tokens[i]);
        }
    }
};

QTEST_MAIN(TestEngine)
#include "test_engine.moc"
