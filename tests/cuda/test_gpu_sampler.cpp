// GpuSampler against the CPU Sampler (its reference): for every row of a mixed batch (greedy,
// temperature, top-k, top-p, min-p, combinations, penalties, min_tokens, logprobs 0/5/20,
// varied seeds and steps) the same token, the same penalised logits (bit for bit), logprobs
// within 1e-4 and the same top-N ids. Both follow the draw defined in engine/sampler.cpp with
// exact integer masses, so tokens must agree exactly: there is no tolerance for near-ties.
// The draw walks kept tokens in index order split over warp and lane ranges, so rows whose mass
// sits at the ends of the vocabulary or across those ranges' borders are checked too.
// Also: repeated calls give the same results; a row's result does not depend on its batch; rows
// sampled by clusters of CTAs (a few rows on sm_90) match the CPU as one CTA a row does.
#include "cuda_test_support.h"

#include "cuda/cuda_device.h"
#include "cuda/cuda_features.h"
#include "cuda/gpu_sampler.h"
#include "cuda/gpu_sampler_kernel.h"
#include "engine/sampler.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>

using namespace brook;
using namespace brook::cudatest;

namespace {

constexpr int kErnieVocab = 103424;
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Row {
    std::vector<float> logits;
    SamplingParams params;
    std::vector<int32_t> prompt, output, stop;
    uint64_t seed = 0;
    int step = 0;

    SamplingContext context() const
    {
        SamplingContext c;
        c.params = &params;
        c.promptTokens = prompt;
        c.outputTokens = output;
        c.stopTokenIds = stop;
        c.seed = seed;
        c.step = step;
        return c;
    }
    std::string describe() const
    {
        const auto& p = params;
        return "T " + std::to_string(p.temperature) + " top_k " + std::to_string(p.topK) + " top_p " +
               std::to_string(p.topP) + " min_p " + std::to_string(p.minP) + " rep " +
               std::to_string(p.repetitionPenalty) + " pres " + std::to_string(p.presencePenalty) + " freq " +
               std::to_string(p.frequencyPenalty) + " min_tokens " + std::to_string(p.minTokens) + " logprobs " +
               std::to_string(p.logprobs) + " seed " + std::to_string(seed) + " step " + std::to_string(step) + " V " +
               std::to_string(logits.size());
    }
};

// Normal logits (std 2-4) plus a few large outliers.
std::vector<float> randomRow(int vocab, std::mt19937_64& rng)
{
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    auto row = randomFloats(static_cast<size_t>(vocab), rng(), 2.0f + 2.0f * uniform(rng));
    for (int k = 0; k < 4; ++k) row[rng() % static_cast<uint64_t>(vocab)] = 8.0f + 8.0f * uniform(rng);
    return row;
}

std::vector<int32_t> randomTokens(size_t n, int vocab, std::mt19937_64& rng, int repeatsOf = 0)
{
    std::vector<int32_t> tokens(n);
    for (auto& t : tokens) t = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab));
    for (int k = 0; k < repeatsOf && !tokens.empty(); ++k) tokens.push_back(tokens[rng() % tokens.size()]);
    return tokens;
}

// Cycles through the option kinds; `index` picks the kind, rng the values.
Row mixedRow(int index, int vocab, std::mt19937_64& rng)
{
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    Row row;
    row.logits = randomRow(vocab, rng);
    row.seed = rng();
    row.step = static_cast<int>(rng() % 2000);
    SamplingParams& p = row.params;
    p.logprobs = std::vector<int>{-1, 0, 5, 20}[static_cast<size_t>(index / 9) % 4];
    p.temperature = 0.5f + uniform(rng);
    switch (index % 9) {
    case 0: p.temperature = 0.0f; break;  // greedy
    case 1: break;                        // temperature only
    case 2: p.topK = std::vector<int>{1, 5, 50, 1000}[rng() % 4]; break;
    case 3: p.topP = 0.5f + 0.49f * uniform(rng); break;
    case 4: p.minP = 0.01f + 0.2f * uniform(rng); break;
    case 5:
        p.topK = 40;
        p.topP = 0.9f;
        p.minP = 0.05f;
        break;
    case 6:  // repetition over the prompt and output (duplicates and out-of-range ids too)
        p.repetitionPenalty = 1.1f + 0.4f * uniform(rng);
        row.prompt = randomTokens(200, vocab, rng, 30);
        row.prompt.push_back(-3);
        row.prompt.push_back(vocab + 7);
        row.output = randomTokens(20, vocab, rng, 10);
        p.topP = 0.95f;
        break;
    case 7:  // presence and frequency over repeated output ids, plus repetition
        p.presencePenalty = 0.3f + uniform(rng);
        p.frequencyPenalty = 0.2f + uniform(rng);
        p.repetitionPenalty = uniform(rng) < 0.5f ? 1.0f : 1.2f;
        row.prompt = randomTokens(50, vocab, rng);
        row.output = randomTokens(30, vocab, rng, 40);
        for (int k = 0; k < 6; ++k) row.logits[static_cast<size_t>(row.output[static_cast<size_t>(k)])] += 12.0f;
        break;
    case 8:  // min_tokens masks stop ids that would otherwise win
        row.stop = {static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab)), static_cast<int32_t>(vocab - 1), -1};
        for (int32_t t : row.stop)
            if (t >= 0) row.logits[static_cast<size_t>(t)] = 40.0f;
        row.output = randomTokens(3, vocab, rng);
        p.minTokens = uniform(rng) < 0.75f ? 5 : 2;  // 2: reached, no mask
        p.temperature = uniform(rng) < 0.5f ? 0.0f : 1.0f;
        break;
    }
    return row;
}

struct GpuRun {
    std::vector<SampleResult> results;
    std::vector<float> logits;  // [R, V] after the call
};

GpuRun runGpu(cuda::GpuSampler& sampler, const std::vector<const Row*>& rows, int vocab)
{
    std::vector<float> host;
    host.reserve(rows.size() * static_cast<size_t>(vocab));
    std::vector<SamplingContext> contexts;
    for (const Row* row : rows) {
        host.insert(host.end(), row->logits.begin(), row->logits.end());
        contexts.push_back(row->context());
    }
    auto device = upload(host);
    GpuRun run;
    run.results = sampler.sample(device.as<float>(), contexts, nullptr);
    run.logits = download<float>(device, host.size());
    return run;
}

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

bool closeLogprob(float got, float want)
{
    if (std::isinf(want) || std::isinf(got)) return got == want;
    return std::abs(got - want) <= 1e-4f;
}

// Compares every row of a GPU call with Sampler::sample on a copy of the same row.
void expectMatchesCpu(const std::vector<const Row*>& rows, const GpuRun& run, int vocab)
{
    QCOMPARE(run.results.size(), rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
        const Row& row = *rows[r];
        std::vector<float> cpuRow = row.logits;
        const SampleResult want = Sampler::sample(cpuRow, row.context());
        const SampleResult& got = run.results[r];
        const QString where = QString("row %1 (%2)").arg(r).arg(QString::fromStdString(row.describe()));
        QVERIFY2(got.token == want.token,
                 qPrintable(where + QString(": token %1, CPU %2").arg(got.token).arg(want.token)));
        const float* edited = run.logits.data() + r * static_cast<size_t>(vocab);
        size_t i = 0;
        while (i < cpuRow.size() && sameBits(edited[i], cpuRow[i])) ++i;  // penalties and masks, bit for bit
        if (i < cpuRow.size())
            QFAIL(qPrintable(where + QString(": edited logit %1 is %2, CPU %3").arg(i).arg(edited[i]).arg(cpuRow[i])));
        QVERIFY2(closeLogprob(got.logprob, want.logprob),
                 qPrintable(where + QString(": logprob %1, CPU %2").arg(got.logprob).arg(want.logprob)));
        QVERIFY2(
            got.topLogprobs.size() == want.topLogprobs.size(),
            qPrintable(where +
                       QString(": %1 top logprobs, CPU %2").arg(got.topLogprobs.size()).arg(want.topLogprobs.size())));
        for (size_t k = 0; k < want.topLogprobs.size(); ++k) {
            const auto& g = got.topLogprobs[k];
            const auto& w = want.topLogprobs[k];
            QVERIFY2(g.token == w.token && closeLogprob(g.logprob, w.logprob),
                     qPrintable(where + QString(": top %1 is (%2, %3), CPU (%4, %5)")
                                            .arg(k)
                                            .arg(g.token)
                                            .arg(g.logprob)
                                            .arg(w.token)
                                            .arg(w.logprob)));
        }
    }
}

// The features that force `size` CTAs a sampled row (CudaFeatures::samplerClusterSize; 0: the
// launcher's choice), for a FeaturesScope.
cuda::CudaFeatures samplerCluster(int size)
{
    cuda::CudaFeatures features;
    features.samplerClusterSize = size;
    return features;
}

void addClusterSizes()
{
    QTest::addColumn<int>("cluster");
    QTest::newRow("launcher's choice") << 0;
    QTest::newRow("3 CTAs a row") << 3;
    QTest::newRow("8 CTAs a row") << 8;
}

std::vector<const Row*> pointers(const std::vector<Row>& rows)
{
    std::vector<const Row*> out;
    for (const Row& row : rows) out.push_back(&row);
    return out;
}

}  // namespace

class TestGpuSampler : public QObject {
    Q_OBJECT

private slots:
    void mixedBatchMatchesCpu_data()
    {
        QTest::addColumn<int>("vocab");
        QTest::addColumn<int>("rows");
        QTest::newRow("tiny V") << 37 << 72;  // fewer tokens than warps: empty ranges
        QTest::newRow("small V") << 1000 << 144;
        QTest::newRow("odd V") << 4099 << 72;
        QTest::newRow("ERNIE V") << kErnieVocab << 72;
        QTest::newRow("ERNIE V, 256 rows") << kErnieVocab << 256;
    }

    void mixedBatchMatchesCpu()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, vocab);
        QFETCH(int, rows);
        std::mt19937_64 rng(static_cast<uint64_t>(vocab) * 31 + 7);
        std::vector<Row> batch;
        for (int r = 0; r < rows; ++r) batch.push_back(mixedRow(r, vocab, rng));
        cuda::GpuSampler sampler(rows, vocab);
        const GpuRun run = runGpu(sampler, pointers(batch), vocab);
        expectMatchesCpu(pointers(batch), run, vocab);
        // Seeded: the same call again gives the same results, logprobs to the bit.
        const GpuRun again = runGpu(sampler, pointers(batch), vocab);
        for (size_t r = 0; r < batch.size(); ++r) {
            QCOMPARE(again.results[r].token, run.results[r].token);
            QVERIFY(sameBits(again.results[r].logprob, run.results[r].logprob));
        }
    }

    // Every option kind (36 rows: each of the nine kinds with logprobs off, 0, 5 and 20) sampled
    // by clusters of CTAs that split each row: shares of whole 32-token lines, some empty at a
    // tiny vocabulary, uneven at 3 and 5 CTAs. 0: the size the launcher picks for one row.
    void clusteredRowsMatchCpu_data()
    {
        QTest::addColumn<int>("vocab");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cluster");
        QTest::newRow("tiny V, 8 CTAs a row") << 37 << 36 << 8;
        QTest::newRow("odd V, 5 CTAs a row") << 4099 << 36 << 5;
        QTest::newRow("ERNIE V, 2 CTAs a row") << kErnieVocab << 36 << 2;
        QTest::newRow("ERNIE V, 3 CTAs a row") << kErnieVocab << 36 << 3;
        QTest::newRow("ERNIE V, 8 CTAs a row") << kErnieVocab << 36 << 8;
        QTest::newRow("ERNIE V, one row, chosen size") << kErnieVocab << 1 << 0;
    }

    void clusteredRowsMatchCpu()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, vocab);
        QFETCH(int, rows);
        QFETCH(int, cluster);
        std::mt19937_64 rng(static_cast<uint64_t>(vocab) * 17 + static_cast<uint64_t>(cluster));
        std::vector<Row> batch;
        for (int r = 0; r < rows; ++r) batch.push_back(mixedRow(r == 0 && rows == 1 ? 3 : r, vocab, rng));
        const FeaturesScope scope(samplerCluster(cluster));
        if (cuda::threadBlockClustersSupported())  // sm_90: the clustered kernel is the one that ran
            QVERIFY(cuda::gpu_sample_cluster_size(rows) == (cluster > 0 ? cluster : 8));
        cuda::GpuSampler sampler(rows, vocab);
        const GpuRun run = runGpu(sampler, pointers(batch), vocab);
        expectMatchesCpu(pointers(batch), run, vocab);
    }

    void edgeCasesMatchCpu_data() { addClusterSizes(); }

    void edgeCasesMatchCpu()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, cluster);
        const FeaturesScope scope(samplerCluster(cluster));
        constexpr int kVocab = 5000;
        std::mt19937_64 rng(99);
        std::vector<Row> batch;
        auto add = [&](std::vector<float> logits, auto configure) {
            Row row;
            row.logits = std::move(logits);
            row.seed = rng();
            row.step = static_cast<int>(rng() % 100);
            row.params.logprobs = 5;
            configure(row);
            batch.push_back(std::move(row));
        };
        auto bf16Row = [&] {  // many exact ties, as bf16 logits give
            auto row = randomRow(kVocab, rng);
            for (float& x : row) x = cuda::toFloat(cuda::fromFloat<__nv_bfloat16>(x));
            return row;
        };
        const std::vector<float> uniform(kVocab, 0.25f);  // one bucket larger than the shared list
        for (float topP : {1.0f, 0.9f, 0.3f}) add(bf16Row(), [&](Row& r) { r.params.topP = topP; });
        add(bf16Row(), [](Row& r) {
            r.params.topK = 300;
            r.params.temperature = 0.7f;
        });
        add(bf16Row(), [](Row& r) {
            r.params.temperature = 0.0f;
            r.params.logprobs = 20;
        });
        for (int topK : {0, 3, 2500}) add(uniform, [&](Row& r) { r.params.topK = topK; });
        add(uniform, [](Row& r) {
            r.params.topP = 0.5f;
            r.params.logprobs = 20;
        });
        add(uniform, [](Row& r) { r.params.temperature = 0.0f; });
        for (float temperature : {1.0f, 0.6f})  // peaked, as real models: most tokens carry no weight
            add(randomRow(kVocab, rng), [&](Row& r) {
                r.logits[77] = 42.0f;
                r.params.temperature = temperature;
            });
        add(randomRow(kVocab, rng), [](Row& r) { r.params.topP = 0.0f; });           // top token only
        add(randomRow(kVocab, rng), [](Row& r) { r.params.minP = 1.5f; });           // top token only
        add(randomRow(kVocab, rng), [](Row& r) { r.params.topK = kVocab + 5; });     // off
        add(randomRow(kVocab, rng), [](Row& r) { r.params.temperature = 1e-38f; });  // overflows: greedy
        add(randomRow(kVocab, rng), [](Row& r) {
            r.params.temperature = 50.0f;
            r.params.topP = 0.999f;
        });
        const size_t maskedRow = batch.size();
        add(randomRow(kVocab, rng), [](Row& r) {  // masked and NaN logits are never drawn
            for (int i = 0; i < kVocab; i += 2) r.logits[static_cast<size_t>(i)] = -kInf;
            r.logits[1] = std::numeric_limits<float>::quiet_NaN();
            r.params.logprobs = 20;
        });
        add(std::vector<float>(kVocab, -kInf), [](Row& r) { r.params.logprobs = 3; });  // all masked
        add(randomRow(kVocab, rng), [](Row& r) {
            r.logits[17] = kInf;
            r.params.logprobs = 3;
        });
        add(randomRow(kVocab, rng), [](Row& r) {  // the chosen token is penalised: logprob of its raw logit
            r.logits[42] = 30.0f;
            r.params.temperature = 0.0f;
            r.params.repetitionPenalty = 1.1f;
            r.params.presencePenalty = 0.5f;
            r.output = {42, 42, 7};
            r.params.logprobs = 2;
        });
        add(randomRow(kVocab, rng), [](Row& r) {  // a penalty moves the draw off the repeated token
            r.logits[10] = 20.0f;
            r.logits[11] = 19.9f;
            r.params.frequencyPenalty = 0.2f;
            r.params.temperature = 0.002f;  // 10 (now 19.8) carries no weight: 11 whatever u is
            r.output = {10};
        });
        cuda::GpuSampler sampler(static_cast<int>(batch.size()), kVocab);
        const GpuRun run = runGpu(sampler, pointers(batch), kVocab);
        expectMatchesCpu(pointers(batch), run, kVocab);
        QCOMPARE(run.results.back().token, 11);
        const int32_t drawn = run.results[maskedRow].token;
        QVERIFY2(drawn % 2 == 1 && drawn != 1, qPrintable(QString("drew masked or NaN token %1").arg(drawn)));
    }

    void indexOrderDrawMatchesCpu_data() { addClusterSizes(); }

    void indexOrderDrawMatchesCpu()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, cluster);
        const FeaturesScope scope(samplerCluster(cluster));
        // ERNIE's V splits into 32 warp ranges of 3232 tokens and lane pieces of 101: put the
        // mass at the ends of the row, on range borders, all on one token, or spread evenly.
        // Clusters of 3 and 8 CTAs cut it into shares of 34,496 and 12,928 tokens, each share
        // into its own warp ranges: mass on those borders too.
        constexpr int kVocab = kErnieVocab;
        constexpr int kSeg = (kVocab + 31) / 32;
        std::mt19937_64 rng(404);
        std::vector<Row> batch;
        auto add = [&](std::vector<float> logits, float temperature, int topK, float topP, float minP) {
            for (int repeat = 0; repeat < 3; ++repeat) {  // three seeds each: different crossings
                Row row;
                row.logits = logits;
                row.seed = rng();
                row.step = static_cast<int>(rng() % 5000);
                row.params.temperature = temperature;
                row.params.topK = topK;
                row.params.topP = topP;
                row.params.minP = minP;
                batch.push_back(std::move(row));
            }
        };
        auto peaks = [&](std::vector<int> tokens, float base) {  // equal peaks over a low background
            std::vector<float> logits(kVocab, base);
            for (int t : tokens) logits[static_cast<size_t>(t)] = 10.0f;
            return logits;
        };
        struct Filter {
            int topK;
            float topP;
            float minP;
        };
        for (const Filter f :
             {Filter{0, 1.0f, 0.0f}, Filter{3, 1.0f, 0.0f}, Filter{0, 0.7f, 0.0f}, Filter{0, 1.0f, 0.5f}}) {
            add(std::vector<float>(kVocab, 1.0f), 1.0f, f.topK, f.topP, f.minP);  // all tied
            add(peaks({0}, -kInf), 1.0f, f.topK, f.topP, f.minP);                 // one token has all the mass
            add(peaks({kVocab - 1}, -200.0f), 1.0f, f.topK, f.topP, f.minP);      // the same, zero-weight rest
            add(peaks({kSeg - 1, kSeg, 5 * kSeg + 100, 5 * kSeg + 101}, -3.0f), 0.9f, f.topK, f.topP, f.minP);
            add(peaks({0, kVocab - 1}, 0.0f), 1.0f, f.topK, f.topP, f.minP);                // mass at both ends
            add(peaks({12927, 12928, 34495, 34496}, -3.0f), 0.9f, f.topK, f.topP, f.minP);  // share borders
            add(randomRow(kVocab, rng), 1.0f, f.topK, f.topP, f.minP);                      // temperature as models
        }
        cuda::GpuSampler sampler(static_cast<int>(batch.size()), kVocab);
        const GpuRun run = runGpu(sampler, pointers(batch), kVocab);
        expectMatchesCpu(pointers(batch), run, kVocab);
        QCOMPARE(run.results[3].token, 0);  // one token has all the mass: rows 3..5 (no filter)
        QCOMPARE(run.results[6].token, kVocab - 1);
    }

    void seedAndStepVaryTheDraw()
    {
        BROOK_REQUIRE_GPU();
        constexpr int kVocab = 2000;
        std::mt19937_64 rng(5);
        const auto logits = randomFloats(kVocab, 5, 0.5f);
        std::vector<Row> batch(64);
        for (size_t r = 0; r < batch.size(); ++r) {
            batch[r].logits = logits;
            batch[r].seed = r < 32 ? 1234 : rng();  // one seed over 32 steps, then 32 seeds
            batch[r].step = static_cast<int>(r < 32 ? r : 7);
        }
        cuda::GpuSampler sampler(static_cast<int>(batch.size()), kVocab);
        const GpuRun run = runGpu(sampler, pointers(batch), kVocab);
        expectMatchesCpu(pointers(batch), run, kVocab);
        std::set<int32_t> bySteps, bySeeds;
        for (size_t r = 0; r < batch.size(); ++r) (r < 32 ? bySteps : bySeeds).insert(run.results[r].token);
        QVERIFY2(bySteps.size() > 16 && bySeeds.size() > 16, "near-uniform logits should give varied tokens");
    }

    void resultsDoNotDependOnTheBatch()
    {
        BROOK_REQUIRE_GPU();
        std::mt19937_64 rng(2025);
        std::vector<Row> batch;
        for (int r = 0; r < 36; ++r) batch.push_back(mixedRow(r, kErnieVocab, rng));
        cuda::GpuSampler sampler(static_cast<int>(batch.size()), kErnieVocab);
        const GpuRun all = runGpu(sampler, pointers(batch), kErnieVocab);
        auto reversed = pointers(batch);
        std::reverse(reversed.begin(), reversed.end());
        const GpuRun backwards = runGpu(sampler, reversed, kErnieVocab);
        for (size_t r = 0; r < batch.size(); ++r) {
            const SampleResult& a = all.results[r];
            const SampleResult& b = backwards.results[batch.size() - 1 - r];
            QVERIFY2(
                a.token == b.token && sameBits(a.logprob, b.logprob),
                qPrintable(QString("row %1: token %2 / %3 in the reversed batch").arg(r).arg(a.token).arg(b.token)));
        }
        for (size_t r = 0; r < batch.size(); r += 5) {
            const GpuRun alone = runGpu(sampler, {&batch[r]}, kErnieVocab);
            QVERIFY2(alone.results[0].token == all.results[r].token &&
                         sameBits(alone.results[0].logprob, all.results[r].logprob),
                     qPrintable(QString("row %1: token %2 alone, %3 batched")
                                    .arg(r)
                                    .arg(alone.results[0].token)
                                    .arg(all.results[r].token)));
        }
    }
};

QTEST_APPLESS_MAIN(TestGpuSampler)
#include "test_gpu_sampler.moc"
