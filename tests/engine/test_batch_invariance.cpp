// Same question, same answer (docs/server.md "Determinism"): a greedy or seeded request's tokens
// and logprobs are bit-identical alone and in any batch, under any --max-num-batched-tokens (so
// any chunked-prefill split), with a prefix-cache hit or a miss, and after preemption and
// recompute. CPU backend, bf16 weights (vdpbf16ps where the CPU has it), fp32 weights and the
// exact fp32 mode (--dtype float32); every vector path the CPU runs by default.
//
// Why this can fail: a kernel chosen by the number of rows in a step (a GEMV for one row, a GEMM
// for many), a reduction split that depends on the batch, attention that switches arithmetic for
// sequences with more than one new token, or a sampler that shares state between rows. Each of
// those changes the last bits of a logit, and a greedy choice or a seeded draw flips within a
// few tokens (measured before the fix: 25 of 96 batched answers differed).
#include "engine_test_support.h"

#include "engine/cpu/cpu_features.h"
#include "launch/cpu_dtype.h"

#include <QtTest/QtTest>

#include <condition_variable>
#include <map>
#include <mutex>
#include <random>

using namespace brook;
using namespace brook::testsupport;

namespace {

constexpr int kNewTokens = 24;
constexpr int kTopLogprobs = 3;

// The requests under test: 4 prompts of different lengths (one shorter than a KV block, one
// over 4 blocks), each greedy and seeded.
std::vector<GenerationRequest> targets(int vocab)
{
    std::mt19937 rng(2026);
    std::vector<GenerationRequest> out;
    for (int length : {5, 17, 40, 71}) {
        const std::vector<int32_t> prompt = randomPrompt(rng, length, vocab);
        GenerationRequest greedy = greedyRequest(prompt, kNewTokens);
        greedy.params.logprobs = kTopLogprobs;
        out.push_back(greedy);
        GenerationRequest seeded = greedy;
        seeded.params.temperature = 0.9f;
        seeded.params.topP = 0.95f;
        seeded.params.seed = uint64_t(1000 + length);
        out.push_back(seeded);
    }
    return out;
}

// Other traffic: prompts of 1-90 tokens, 1-40 new tokens, greedy and sampled (unseeded).
std::vector<GenerationRequest> fillers(int count, int vocab, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> length(1, 90), tokens(1, 40), coin(0, 1);
    std::vector<GenerationRequest> out;
    for (int i = 0; i < count; ++i) {
        GenerationRequest r = greedyRequest(randomPrompt(rng, length(rng), vocab), tokens(rng));
        if (coin(rng)) r.params.temperature = 1.0f;
        out.push_back(r);
    }
    return out;
}

// Submits all at once (the engine schedules them side by side) and waits for every one.
std::vector<Completion> completeAll(Engine& engine, std::vector<GenerationRequest> requests)
{
    std::mutex mutex;
    std::condition_variable done;
    std::vector<Completion> out(requests.size());
    size_t finished = 0;
    auto ids = engine.submitAll(std::move(requests), [&](size_t i) {
        return OutputCallback([&, i](const RequestOutput& o) {
            std::lock_guard lock(mutex);
            Completion& c = out[i];
            c.tokens.insert(c.tokens.end(), o.newTokenIds.begin(), o.newTokenIds.end());
            c.logprobs.insert(c.logprobs.end(), o.logprobs.begin(), o.logprobs.end());
            if (o.finishReason) {
                c.finish = o.finishReason;
                ++finished;
                done.notify_all();
            }
        });
    });
    if (!ids) qFatal("submitAll: %s", ids.error().c_str());
    std::unique_lock lock(mutex);
    if (!done.wait_for(lock, std::chrono::seconds(300), [&] { return finished == out.size(); }))
        qFatal("completeAll: %zu of %zu requests finished in 300 s", finished, out.size());
    return out;
}

// Empty when equal, else where the first difference is.
QString difference(const Completion& got, const Completion& want)
{
    if (got.tokens != want.tokens) {
        size_t i = 0;
        while (i < got.tokens.size() && i < want.tokens.size() && got.tokens[i] == want.tokens[i]) ++i;
        return QString("tokens differ from position %1 of %2").arg(i).arg(want.tokens.size());
    }
    if (got.logprobs.size() != want.logprobs.size()) return "a different number of logprobs";
    for (size_t i = 0; i < want.logprobs.size(); ++i) {
        const TokenLogprobs &a = got.logprobs[i], &b = want.logprobs[i];
        if (a.token != b.token || a.logprob != b.logprob || a.top.size() != b.top.size())
            return QString("logprob %1: %2 against %3 alone").arg(i).arg(a.logprob, 0, 'g', 9).arg(b.logprob, 0, 'g', 9);
        for (size_t j = 0; j < b.top.size(); ++j)
            if (a.top[j].token != b.top[j].token || a.top[j].logprob != b.top[j].logprob)
                return QString("top logprob %1 of token %2 differs").arg(j).arg(i);
    }
    return {};
}

struct ModelUnderTest {
    QTemporaryDir dir;
    std::filesystem::path path;
};

const std::filesystem::path& modelDir(DType dtype)
{
    static std::map<DType, std::unique_ptr<ModelUnderTest>> models;
    auto& m = models[dtype];
    if (!m) {
        m = std::make_unique<ModelUnderTest>();
        testing::TestModelOptions options;
        options.shape = testing::TestModelShape::tiny();
        options.dtype = dtype;
        m->path = writeModelInto(m->dir, options);
    }
    return m->path;
}

LaunchOptions options(DType weights, const std::string& dtype, int maxNumBatchedTokens)
{
    LaunchOptions o;
    o.modelDir = modelDir(weights);
    o.device = "cpu";
    o.dtype = dtype;
    o.maxModelLen = 256;
    o.maxNumSeqs = 80;
    o.maxNumBatchedTokens = maxNumBatchedTokens;
    return o;
}

}  // namespace

class TestBatchInvariance : public QObject {
    Q_OBJECT

private slots:
    void aloneEqualsBatched_data()
    {
        QTest::addColumn<int>("weights");
        QTest::addColumn<QString>("dtype");
        const std::pair<DType, const char*> modes[] = {
            {DType::BF16, "auto"}, {DType::BF16, "float32"}, {DType::F32, "auto"}};
        for (const auto& [weights, dtype] : modes)
            QTest::addRow("%s weights, --dtype %s", dtypeName(weights), dtype) << int(weights) << QString(dtype);
    }

    // Each target alone on an idle engine, then among 1, 6, 31 and 63 others (batches of 2, 7, 32
    // and 64), under --max-num-batched-tokens 16 (every prompt chunked), 64 and 2048, with the
    // prefix cache on: the second and later rounds hit the blocks the first one cached.
    void aloneEqualsBatched()
    {
        QFETCH(int, weights);
        QFETCH(QString, dtype);
        std::vector<Completion> alone;
        const int vocab = launch(options(DType(weights), dtype.toStdString(), 2048))->tokenizer().vocabSize();
        for (const GenerationRequest& r : targets(vocab)) {
            // A fresh engine each: an empty prefix cache (a miss), nothing else running.
            auto fresh = launch(options(DType(weights), dtype.toStdString(), 2048));
            alone.push_back(complete(*fresh, r));
            QCOMPARE(int(alone.back().tokens.size()), kNewTokens);
        }
        for (int budget : {16, 64, 2048}) {
            auto engine = launch(options(DType(weights), dtype.toStdString(), budget));
            const std::vector<GenerationRequest> want = targets(vocab);
            for (int batch : {2, 7, 32, 64}) {
                for (size_t i = 0; i < want.size(); ++i) {
                    std::vector<GenerationRequest> requests = fillers(batch - 1, vocab, uint32_t(batch * 100 + i));
                    // The target somewhere in the middle of the batch.
                    const size_t at = requests.size() / 2;
                    requests.insert(requests.begin() + ptrdiff_t(at), want[i]);
                    const std::vector<Completion> got = completeAll(*engine, requests);
                    const QString why = difference(got[at], alone[i]);
                    QVERIFY2(why.isEmpty(), qPrintable(QString("target %1 in a batch of %2, budget %3: %4")
                                                           .arg(i)
                                                           .arg(batch)
                                                           .arg(budget)
                                                           .arg(why)));
                }
            }
        }
    }

    // A prefix-cache hit: the same target after another request cached its prompt's full blocks
    // (and after itself), against the cold answer.
    void prefixCacheHitEqualsMiss()
    {
        auto engine = launch(options(DType::BF16, "auto", 2048));
        const std::vector<GenerationRequest> want = targets(engine->tokenizer().vocabSize());
        const GenerationRequest& longest = want[6];  // 71 tokens: 4 full blocks to reuse
        const Completion cold = complete(*engine, longest);
        GenerationRequest sharer = longest;  // the same 64-token prefix, another ending
        std::get<std::vector<int32_t>>(sharer.prompt).back() ^= 1;
        complete(*engine, sharer);
        for (int round = 0; round < 2; ++round) {
            auto stream = RequestStream::submit(*engine, longest);
            QVERIFY(stream.ok());
            int cached = 0;
            Completion c;
            while (auto out = (*stream)->next()) {
                cached = std::max(cached, out->numCachedTokens);
                c.tokens.insert(c.tokens.end(), out->newTokenIds.begin(), out->newTokenIds.end());
                c.logprobs.insert(c.logprobs.end(), out->logprobs.begin(), out->logprobs.end());
            }
            QVERIFY2(cached >= 64, qPrintable(QString("only %1 prompt tokens came from the cache").arg(cached)));
            const QString why = difference(c, cold);
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }

    // Preemption and recompute: a KV cache too small for the batch, so running requests are
    // preempted and their prompt and generated tokens recomputed as one prompt.
    void preemptionEqualsUninterrupted()
    {
        auto reference = launch(options(DType::BF16, "auto", 2048));
        const int vocab = reference->tokenizer().vocabSize();
        std::vector<GenerationRequest> requests = targets(vocab);
        for (GenerationRequest& r : requests) r.params.maxTokens = 60;
        std::vector<Completion> alone;
        for (const GenerationRequest& r : requests) alone.push_back(complete(*reference, r));
        reference.reset();

        LaunchOptions small = options(DType::BF16, "auto", 64);
        small.numKvBlocks = 20;  // 320 slots for 8 requests of up to 131 tokens
        auto engine = launch(small);
        const std::vector<Completion> got = completeAll(*engine, requests);
        QVERIFY2(waitIdle(*engine).numPreemptions > 0, "the small cache should have forced preemption");
        for (size_t i = 0; i < requests.size(); ++i) {
            const QString why = difference(got[i], alone[i]);
            QVERIFY2(why.isEmpty(), qPrintable(QString("target %1: %2").arg(i).arg(why)));
        }
    }

    // --dtype float32 changes the arithmetic of a bf16 model (and so is not ignored), and the
    // CPU refuses what it cannot honour with a message naming the flag.
    void dtypeIsHonouredOrRefused()
    {
        GenerationRequest r = greedyRequest({5, 6, 7, 8, 9, 10, 11, 12}, 1);
        r.params.logprobs = 0;
        const Completion rounded = complete(*launch(options(DType::BF16, "auto", 2048)), r);
        const Completion exact = complete(*launch(options(DType::BF16, "float32", 2048)), r);
        const Completion bf16 = complete(*launch(options(DType::BF16, "bfloat16", 2048)), r);
        QCOMPARE(bf16.logprobs.front().logprob, rounded.logprobs.front().logprob);
        if (cpu::activeCpuIsa() == cpu::CpuIsa::Avx512Bf16)  // elsewhere both widen to fp32
            QVERIFY(exact.logprobs.front().logprob != rounded.logprobs.front().logprob);
        const struct {
            DType weights;
            const char* dtype;
            const char* says;
        } refused[] = {
            {DType::BF16, "float16", "no float16 arithmetic"},
            {DType::F32, "bfloat16", "does not round its weights to bfloat16"},
            {DType::BF16, "float64", "dtype"},
        };
        for (const auto& c : refused) {
            auto launched = launchEngine(options(c.weights, c.dtype, 2048));
            QVERIFY2(!launched, c.dtype);
            QVERIFY2(launched.error().find(c.says) != std::string::npos, launched.error().c_str());
        }
        // (The tiny model takes no quantization group size, so the rule itself.)
        auto quantized = cpuArithmeticFor(DTypeChoice::Float32, DType::BF16, true);
        QVERIFY(!quantized);
        QVERIFY2(quantized.error().find("drop --quantization") != std::string::npos, quantized.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestBatchInvariance)
#include "test_batch_invariance.moc"
