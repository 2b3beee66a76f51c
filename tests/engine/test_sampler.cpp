// Tests for Sampler: every option against a plain reference (full sorts, double precision, the
// draw's index-order walk written out), empirical frequencies against the softmax, and the
// (seed, step) determinism the GPU relies on.
#include "engine/sampler.h"
#include "engine/sampler_math.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <vector>

using namespace brook;

namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

std::vector<float> randomLogits(size_t vocab, uint32_t seed, float scale = 3.0f)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> logits(vocab);
    for (float& x : logits) x = normal(rng);
    return logits;
}

// Draws one token from a fresh copy of `logits` (on `threads`, if given).
int32_t draw(const std::vector<float>& logits, const SamplingParams& params, uint64_t seed, int step = 0,
             const SamplerThreads& threads = {})
{
    std::vector<float> row = logits;
    SamplingContext context;
    context.params = &params;
    context.seed = seed;
    context.step = step;
    return Sampler::sample(row, context, threads).token;
}

// The draw's settings the reference-comparison tests sweep.
struct Filters {
    float temperature;
    int topK;
    float topP;
    float minP;

    SamplingParams params() const
    {
        SamplingParams p;
        p.temperature = temperature;
        p.topK = topK;
        p.topP = topP;
        p.minP = minP;
        return p;
    }
};

std::vector<double> softmax(const std::vector<float>& logits, double temperature = 1.0)
{
    const double maxLogit = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(logits.size());
    double sum = 0.0;
    for (size_t i = 0; i < logits.size(); ++i) sum += p[i] = std::exp((logits[i] - maxLogit) / temperature);
    for (double& x : p) x /= sum;
    return p;
}

// Frequencies of `draws` tokens drawn with seeds 0..draws-1.
std::vector<double> frequencies(const std::vector<float>& logits, const SamplingParams& params, int draws)
{
    std::vector<double> freq(logits.size(), 0.0);
    for (int seed = 0; seed < draws; ++seed)
        freq[draw(logits, params, static_cast<uint64_t>(seed) * 7919u + 13u)] += 1.0;
    for (double& f : freq) f /= draws;
    return freq;
}

// Checks empirical frequencies against expected probabilities: 5 standard errors plus a little.
void expectFrequencies(const std::vector<double>& freq, const std::vector<double>& expected, int draws)
{
    for (size_t i = 0; i < freq.size(); ++i) {
        const double sigma = std::sqrt(expected[i] * (1.0 - expected[i]) / draws);
        QVERIFY2(std::abs(freq[i] - expected[i]) <= 5.0 * sigma + 1e-3,
                 qPrintable(QString("token %1: frequency %2, expected %3").arg(i).arg(freq[i]).arg(expected[i])));
    }
}

// The inverse-CDF walk of the definition over `walk` (token ids in walking order): the first
// kept token whose running mass C has double(C) > u * double(Z), else the last kept one walked.
int32_t walkDraw(const std::vector<uint64_t>& w, const std::vector<bool>& kept, const std::vector<int32_t>& walk,
                 double u)
{
    uint64_t mass = 0;
    for (int32_t token : walk)
        if (kept[token]) mass += w[token];
    const double target = u * static_cast<double>(mass);
    uint64_t cumulative = 0;
    int32_t last = -1;
    for (int32_t token : walk) {
        if (!kept[token]) continue;
        cumulative += w[token];
        last = token;
        if (static_cast<double>(cumulative) > target) return token;
    }
    return last;
}

// The documented algorithm (sampler.cpp's header: probabilities from samplerProbBits, exact
// integer weights) with full sorts, to check the lazy partial sorts against. `descending`:
// the draw walks the kept tokens by probability instead of by index (the old definition).
int32_t referenceDraw(const std::vector<float>& logits, const SamplingParams& params, uint64_t seed, int step,
                      bool descending = false)
{
    const float maxLogit = *std::max_element(logits.begin(), logits.end());
    const float maxScaled = maxLogit / params.temperature;
    const int shift = samplerWeightShift(static_cast<int>(logits.size()));
    std::vector<float> p(logits.size());
    std::vector<uint64_t> w(logits.size());
    std::vector<int32_t> order;
    for (size_t i = 0; i < logits.size(); ++i) {
        const uint32_t bits = samplerProbBits(logits[i] / params.temperature - maxScaled);
        p[i] = bitsFloat(bits);
        w[i] = samplerWeight(bits, shift);
        if (w[i] > 0) order.push_back(static_cast<int32_t>(i));
    }
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
    size_t kept = order.size();
    if (params.topK > 0) kept = std::min(kept, static_cast<size_t>(params.topK));
    if (params.topP < 1.0f) {
        uint64_t mass = 0;
        for (size_t i = 0; i < kept; ++i) mass += w[order[i]];
        const double goal = static_cast<double>(params.topP) * static_cast<double>(mass);
        uint64_t cumulative = 0;
        size_t i = 0;
        while (i < kept) {
            cumulative += w[order[i++]];
            if (static_cast<double>(cumulative) >= goal) break;
        }
        kept = i;
    }
    if (params.minP > 0.0f) {
        size_t i = 1;
        while (i < kept && p[order[i]] >= params.minP) ++i;
        kept = i;
    }
    std::vector<bool> isKept(logits.size(), false);
    for (size_t i = 0; i < kept; ++i) isKept[order[i]] = true;
    std::vector<int32_t> walk(logits.size());
    std::iota(walk.begin(), walk.end(), 0);  // vocabulary index order
    if (descending) walk = order;
    return walkDraw(w, isKept, walk, Sampler::uniform(seed, step));
}

// splitmix64 written out from the header comment of sampler.cpp.
double referenceUniform(uint64_t seed, int step)
{
    uint64_t x = seed ^ (static_cast<uint64_t>(static_cast<int64_t>(step)) * 0x9E3779B97F4A7C15ull);
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    return static_cast<double>(z >> 11) / 9007199254740992.0;
}

std::set<int32_t> drawnSet(const std::vector<float>& logits, const SamplingParams& params, int draws)
{
    std::set<int32_t> seen;
    for (int seed = 0; seed < draws; ++seed) seen.insert(draw(logits, params, static_cast<uint64_t>(seed) + 1000u));
    return seen;
}

// Logits whose softmax is exactly-ish {0.5, 0.3, 0.15, 0.05}.
std::vector<float> fourTokenLogits()
{
    return {std::log(0.5f) + 1.7f, std::log(0.3f) + 1.7f, std::log(0.15f) + 1.7f, std::log(0.05f) + 1.7f};
}

}  // namespace

class TestSampler : public QObject {
    Q_OBJECT

private slots:
    void greedyIsArgmax()
    {
        for (uint32_t seed = 1; seed <= 20; ++seed) {
            const auto logits = randomLogits(1000 + seed, seed);
            const auto expected = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
            SamplingParams greedy;
            greedy.temperature = 0.0f;
            QCOMPARE(draw(logits, greedy, seed), expected);
            SamplingParams topOne;
            topOne.temperature = 1.5f;
            topOne.topK = 1;
            QCOMPARE(draw(logits, topOne, seed), expected);
        }
        // Ties go to the lowest index.
        std::vector<float> tied = {0.5f, 2.0f, -1.0f, 2.0f, 2.0f};
        SamplingParams greedy;
        greedy.temperature = 0.0f;
        QCOMPARE(draw(tied, greedy, 0), 1);
    }

    void temperatureShapesTheDistribution()
    {
        const auto logits = randomLogits(6, 42, 1.0f);
        constexpr int kDraws = 30000;
        std::vector<std::vector<double>> measured;
        for (double temperature : {0.5, 1.0, 2.0}) {
            SamplingParams params;
            params.temperature = static_cast<float>(temperature);
            const auto freq = frequencies(logits, params, kDraws);
            expectFrequencies(freq, softmax(logits, temperature), kDraws);
            measured.push_back(freq);
        }
        // Colder means the top token gets more of the mass.
        const auto top = std::max_element(logits.begin(), logits.end()) - logits.begin();
        QVERIFY(measured[0][top] > measured[1][top] + 0.02);
        QVERIFY(measured[1][top] > measured[2][top] + 0.02);
    }

    void topKNeverLeavesTheTopK()
    {
        const auto logits = randomLogits(300, 7, 1.0f);
        std::vector<int32_t> byLogit(logits.size());
        std::iota(byLogit.begin(), byLogit.end(), 0);
        std::sort(byLogit.begin(), byLogit.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
        SamplingParams params;
        params.temperature = 1.3f;
        params.topK = 5;
        const std::set<int32_t> allowed(byLogit.begin(), byLogit.begin() + 5);
        constexpr int kDraws = 20000;
        const auto freq = frequencies(logits, params, kDraws);
        std::vector<float> topLogits;
        for (int32_t token : byLogit)
            if (allowed.count(token)) topLogits.push_back(logits[token]);
        const auto expectedTop = softmax(topLogits, 1.3);
        for (size_t token = 0; token < logits.size(); ++token) {
            if (!allowed.count(static_cast<int32_t>(token))) {
                QCOMPARE(freq[token], 0.0);
                continue;
            }
            const size_t rank = std::find(byLogit.begin(), byLogit.end(), token) - byLogit.begin();
            const double sigma = std::sqrt(expectedTop[rank] * (1 - expectedTop[rank]) / kDraws);
            QVERIFY(std::abs(freq[token] - expectedTop[rank]) <= 5 * sigma + 1e-3);
        }
    }

    void topPBoundaries()
    {
        const auto logits = fourTokenLogits();  // probabilities 0.5, 0.3, 0.15, 0.05
        struct Case {
            float topP;
            std::set<int32_t> expected;
        };
        const std::vector<Case> cases = {{0.0f, {0}},           {0.49f, {0}},        {0.51f, {0, 1}},
                                         {0.79f, {0, 1}},       {0.81f, {0, 1, 2}},  {0.94f, {0, 1, 2}},
                                         {0.96f, {0, 1, 2, 3}}, {1.0f, {0, 1, 2, 3}}};
        for (const auto& c : cases) {
            SamplingParams params;
            params.topP = c.topP;
            QCOMPARE(drawnSet(logits, params, 4000), c.expected);
        }
        // Within the kept set, mass is renormalised: {0.5, 0.3} -> {0.625, 0.375}.
        SamplingParams params;
        params.topP = 0.6f;
        constexpr int kDraws = 20000;
        expectFrequencies(frequencies(logits, params, kDraws), {0.625, 0.375, 0.0, 0.0}, kDraws);
    }

    void minPDropsTheTail()
    {
        const auto logits = fourTokenLogits();
        struct Case {
            float minP;
            int topK;
            float topP;
            std::set<int32_t> expected;
        };
        // Thresholds are min_p * 0.5 in probability terms.
        const std::vector<Case> cases = {
            {0.09f, 0, 1.0f, {0, 1, 2, 3}}, {0.11f, 0, 1.0f, {0, 1, 2}}, {0.35f, 0, 1.0f, {0, 1}},
            {0.61f, 0, 1.0f, {0}},          {2.0f, 0, 1.0f, {0}},        {0.11f, 2, 1.0f, {0, 1}},
            {0.09f, 3, 0.9f, {0, 1, 2}},    {0.35f, 3, 0.9f, {0, 1}},    {0.09f, 0, 0.7f, {0, 1}}};
        for (const auto& c : cases) {
            SamplingParams params;
            params.minP = c.minP;
            params.topK = c.topK;
            params.topP = c.topP;
            QCOMPARE(drawnSet(logits, params, 4000), c.expected);
        }
        SamplingParams params;
        params.minP = 0.35f;
        constexpr int kDraws = 20000;
        expectFrequencies(frequencies(logits, params, kDraws), {0.625, 0.375, 0.0, 0.0}, kDraws);
    }

    void penaltiesFollowTheFormulas()
    {
        auto logits = randomLogits(64, 5);
        logits[3] = 2.5f;    // a positive prompt token
        logits[10] = -1.5f;  // a negative prompt token
        const std::vector<int32_t> prompt = {3, 3, 10, 7, 99999, -4};
        const std::vector<int32_t> output = {7, 12, 12, 12, 40, 70};
        SamplingParams params;
        params.temperature = 0.0f;
        params.repetitionPenalty = 1.3f;
        params.presencePenalty = 0.5f;
        params.frequencyPenalty = 0.25f;

        std::vector<float> expected = logits;
        for (int32_t token : std::set<int32_t>{3, 10, 7, 12, 40}) {
            float& x = expected[token];
            x = x > 0.0f ? x / 1.3f : x * 1.3f;
        }
        std::map<int32_t, int> counts = {{7, 1}, {12, 3}, {40, 1}};
        for (auto [token, count] : counts) expected[token] -= 0.25f * static_cast<float>(count) + 0.5f;

        std::vector<float> row = logits;
        SamplingContext context;
        context.params = &params;
        context.promptTokens = prompt;
        context.outputTokens = output;
        const auto result = Sampler::sample(row, context);
        for (size_t i = 0; i < row.size(); ++i)
            QVERIFY2(std::abs(row[i] - expected[i]) <= 1e-6f * std::max(1.0f, std::abs(expected[i])),
                     qPrintable(QString("token %1: %2 vs %3").arg(i).arg(row[i]).arg(expected[i])));
        QCOMPARE(result.token,
                 static_cast<int32_t>(std::max_element(expected.begin(), expected.end()) - expected.begin()));
        QVERIFY(row[3] < logits[3] && row[10] < logits[10]);  // both directions push the logit down

        // A presence penalty moves the argmax off a repeated token.
        std::vector<float> close = {0.0f, 3.0f, 2.9f};
        SamplingParams presence;
        presence.temperature = 0.0f;
        presence.presencePenalty = 0.2f;
        const std::vector<int32_t> repeated = {1};
        SamplingContext presenceContext;
        presenceContext.params = &presence;
        presenceContext.outputTokens = repeated;
        QCOMPARE(Sampler::sample(close, presenceContext).token, 2);
        QCOMPARE(close[1], 2.8f);
    }

    void minTokensMasksStopIds()
    {
        auto logits = randomLogits(100, 11);
        logits[5] = 50.0f;  // the stop token would win every time
        logits[9] = 30.0f;
        const std::vector<int32_t> stopIds = {5, 9};
        const std::vector<int32_t> output = {1, 2};
        for (float temperature : {0.0f, 1.0f}) {
            SamplingParams params;
            params.temperature = temperature;
            params.minTokens = 3;
            for (uint64_t seed = 0; seed < 200; ++seed) {
                std::vector<float> row = logits;
                SamplingContext context;
                context.params = &params;
                context.outputTokens = output;
                context.stopTokenIds = stopIds;
                context.seed = seed;
                context.step = 2;
                const auto token = Sampler::sample(row, context).token;
                QVERIFY(token != 5 && token != 9);
                QVERIFY(std::isinf(row[5]) && row[5] < 0 && std::isinf(row[9]));
            }
            params.minTokens = 2;  // reached: no mask
            std::vector<float> row = logits;
            SamplingContext context;
            context.params = &params;
            context.outputTokens = output;
            context.stopTokenIds = stopIds;
            QCOMPARE(Sampler::sample(row, context).token, 5);
        }
    }

    void logprobsComeFromRawLogits()
    {
        for (uint32_t seed = 1; seed <= 10; ++seed) {
            const auto logits = randomLogits(5000, 100 + seed, 4.0f);
            SamplingParams params;
            params.temperature = 0.7f;
            params.repetitionPenalty = 2.0f;  // must not leak into the logprobs
            params.logprobs = 5;
            const std::vector<int32_t> prompt = {1, 2, 3, 100, 200};
            std::vector<float> row = logits;
            SamplingContext context;
            context.params = &params;
            context.promptTokens = prompt;
            context.seed = seed;
            const auto result = Sampler::sample(row, context);

            double maxLogit = *std::max_element(logits.begin(), logits.end());
            double sum = 0.0;
            for (float x : logits) sum += std::exp(static_cast<double>(x) - maxLogit);
            const double logSumExp = maxLogit + std::log(sum);
            QVERIFY(std::abs(result.logprob - (logits[result.token] - logSumExp)) < 1e-5);

            std::vector<int32_t> order(logits.size());
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
            QCOMPARE(result.topLogprobs.size(), size_t{5});
            for (size_t i = 0; i < 5; ++i) {
                QCOMPARE(result.topLogprobs[i].token, order[i]);
                QVERIFY(std::abs(result.topLogprobs[i].logprob - (logits[order[i]] - logSumExp)) < 1e-5);
                if (i > 0) QVERIFY(result.topLogprobs[i].logprob <= result.topLogprobs[i - 1].logprob);
            }
        }
        // N = 0: the chosen token's logprob only. N = -1: nothing asked.
        const auto logits = randomLogits(50, 3);
        SamplingParams params;
        params.logprobs = 0;
        std::vector<float> row = logits;
        SamplingContext context;
        context.params = &params;
        auto result = Sampler::sample(row, context);
        QVERIFY(result.topLogprobs.empty());
        QVERIFY(result.logprob < 0.0f);
        params.logprobs = -1;
        row = logits;
        result = Sampler::sample(row, context);
        QVERIFY(result.topLogprobs.empty());
        QCOMPARE(result.logprob, 0.0f);
    }

    void seedAndStepDetermineTheDraw()
    {
        const auto logits = randomLogits(2000, 77, 0.5f);
        SamplingParams params;
        params.temperature = 1.0f;
        SamplingParams other;
        other.temperature = 0.8f;
        other.topK = 40;
        other.topP = 0.9f;
        const auto noise = randomLogits(3000, 78);
        std::set<int32_t> distinct;
        for (uint64_t seed = 0; seed < 300; ++seed) {
            const int32_t alone = draw(logits, params, seed, 3);
            // "Batched": other requests sampled in between on the same thread.
            draw(noise, other, seed + 1, 9);
            QCOMPARE(draw(logits, params, seed, 3), alone);
            distinct.insert(alone);
        }
        QVERIFY(distinct.size() > 100);  // different seeds give different draws
        QVERIFY(Sampler::uniform(1, 0) != Sampler::uniform(1, 1));
        QVERIFY(Sampler::uniform(1, 0) != Sampler::uniform(2, 0));

        double mean = 0.0;
        for (int step = 0; step < 100000; ++step) {
            const double u = Sampler::uniform(12345, step);
            QVERIFY(u >= 0.0 && u < 1.0);
            QCOMPARE(u, referenceUniform(12345, step));
            mean += u;
        }
        QVERIFY(std::abs(mean / 100000 - 0.5) < 0.005);
        QCOMPARE(Sampler::uniform(~0ull, -7), referenceUniform(~0ull, -7));
    }

    void matchesTheFullSortReference()
    {
        // The lazy partial sorts must give exactly the documented inverse-CDF draw.
        const std::vector<Filters> cases = {{1.0f, 0, 1.0f, 0.0f},  {0.7f, 50, 1.0f, 0.0f}, {1.2f, 0, 0.9f, 0.0f},
                                            {1.0f, 0, 1.0f, 0.05f}, {0.9f, 20, 0.8f, 0.1f}, {2.0f, 0, 0.95f, 0.01f},
                                            {1.0f, 500, 1.0f, 0.0f}};
        for (size_t c = 0; c < cases.size(); ++c) {
            const auto logits = randomLogits(3000, 500 + static_cast<uint32_t>(c), 2.0f);
            const SamplingParams params = cases[c].params();
            for (int step = 0; step < 200; ++step)
                QCOMPARE(draw(logits, params, 99, step), referenceDraw(logits, params, 99, step));
        }
    }

    void nonFiniteLogitsAreNeverDrawn()
    {
        auto logits = randomLogits(500, 31, 1.0f);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const float inf = std::numeric_limits<float>::infinity();
        logits[0] = nan;
        logits[1] = -inf;
        logits[2] = nan;
        SamplingParams params;
        params.temperature = 2.0f;
        for (int32_t token : drawnSet(logits, params, 3000)) QVERIFY(token > 2);
        params.temperature = 0.0f;
        const auto expected = static_cast<int32_t>(std::max_element(logits.begin() + 3, logits.end()) - logits.begin());
        QCOMPARE(draw(logits, params, 0), expected);
        // Everything masked: a valid index, no crash.
        const std::vector<float> masked(64, -inf);
        params.temperature = 1.0f;
        const int32_t token = draw(masked, params, 1);
        QVERIFY(token >= 0 && token < 64);
        // A temperature so small that logit / T overflows behaves as greedy.
        params.temperature = 1e-38f;
        const auto top = static_cast<int32_t>(std::max_element(logits.begin() + 3, logits.end()) - logits.begin());
        QCOMPARE(draw(logits, params, 2), top);
    }

    void threadsGiveTheSameDraws()
    {
        // Per-thread scratch: concurrent sampling must match sampling on one thread.
        const auto logits = randomLogits(20000, 91, 2.0f);
        SamplingParams params;
        params.temperature = 0.9f;
        params.topP = 0.95f;
        params.logprobs = 3;
        std::vector<int32_t> expected;
        for (int step = 0; step < 50; ++step) expected.push_back(draw(logits, params, 7, step));
        std::vector<std::vector<int32_t>> got(4);
        std::vector<std::thread> threads;
        for (size_t t = 0; t < got.size(); ++t)
            threads.emplace_back([&, t] {
                for (int step = 0; step < 50; ++step) got[t].push_back(draw(logits, params, 7, step));
            });
        for (auto& thread : threads) thread.join();
        for (const auto& result : got) QCOMPARE(result, expected);
    }

    void rowSplitOverThreadsGivesTheSameDraws()
    {
        // SamplerThreads (the CPU backend's pool at batch 1): slices of the row on other threads
        // draw exactly the reference's token. Real threads, a part each; 2, 3 and 7 parts over rows
        // of 40,000 tokens (2 slices at most) and ERNIE's 103,424 (up to 6), with NaN, -inf, a
        // peaked row and rows below the slice minimum (never split).
        const SamplerThreads::Run onThreads = [](int parts, const std::function<void(int)>& fn) {
            std::vector<std::thread> threads;
            for (int part = 0; part < parts; ++part) threads.emplace_back(fn, part);
            for (auto& thread : threads) thread.join();
        };
        std::vector<std::vector<float>> rows = {randomLogits(103424, 71, 3.0f), randomLogits(40000, 72, 2.0f),
                                                randomLogits(103424, 73, 0.5f), randomLogits(9000, 74, 2.0f)};
        rows[0][5] = std::numeric_limits<float>::quiet_NaN();
        rows[0][70000] = -kInfinity;
        rows[2][90000] = 40.0f;  // one token holds nearly all the mass
        const std::vector<Filters> cases = {{0.8f, 0, 0.8f, 0.0f},
                                            {1.0f, 0, 1.0f, 0.0f},
                                            {0.6f, 0, 0.95f, 0.0f},
                                            {0.9f, 40, 0.9f, 0.0f},
                                            {1.0f, 0, 0.9f, 0.05f}};
        for (int parts : {2, 3, 7}) {
            const SamplerThreads split{parts, onThreads};
            for (size_t r = 0; r < rows.size(); ++r)
                for (const Filters& c : cases) {
                    const SamplingParams params = c.params();
                    for (int step = 0; step < 4; ++step)
                        QCOMPARE(draw(rows[r], params, 77 + r, step, split),
                                 referenceDraw(rows[r], params, 77 + r, step));
                }
        }
    }

    void drawWalksKeptTokensInIndexOrder()
    {
        // Hand-built rows: probabilities not in index order, ties, and one token with all the mass.
        const std::vector<std::vector<float>> rows = {{0.5f, 2.0f, 1.0f, 3.0f, -1.0f},
                                                      {1.0f, 1.0f, 1.0f, 1.0f, 1.0f},
                                                      {0.0f, -200.0f, -200.0f, -200.0f, -200.0f},
                                                      {-1.0f, 2.0f, 2.0f, -kInfinity, 0.25f}};
        const std::vector<Filters> variants = {{1.0f, 0, 1.0f, 0.0f}, {0.7f, 0, 1.0f, 0.0f},  {1.0f, 2, 1.0f, 0.0f},
                                               {1.0f, 3, 1.0f, 0.0f}, {1.0f, 0, 0.5f, 0.0f},  {1.3f, 0, 0.8f, 0.0f},
                                               {1.0f, 0, 1.0f, 0.2f}, {1.0f, 4, 0.9f, 0.05f}, {2.0f, 0, 0.95f, 0.3f}};
        for (size_t r = 0; r < rows.size(); ++r) {
            for (const Filters& v : variants) {
                const SamplingParams params = v.params();
                for (uint64_t seed : {1ull, 77ull, 0xDEADBEEFull})
                    for (int step = 0; step < 400; ++step)
                        QCOMPARE(draw(rows[r], params, seed, step), referenceDraw(rows[r], params, seed, step));
            }
        }

        // The walk is by index, not by probability: with u * Z below token 0's mass the draw is
        // token 0, the fourth most likely; the old descending walk would give token 3.
        const std::vector<float>& row = rows[0];
        const int shift = samplerWeightShift(5);
        std::vector<uint64_t> w;
        for (float x : row) w.push_back(samplerWeight(samplerProbBits(x - 3.0f), shift));
        const uint64_t total = std::accumulate(w.begin(), w.end(), uint64_t{0});
        SamplingParams plain;
        int lowU = 0, highU = 0, differ = 0;
        for (int step = 0; step < 5000; ++step) {
            const double target = Sampler::uniform(3, step) * static_cast<double>(total);
            const int32_t token = draw(row, plain, 3, step);
            if (target < static_cast<double>(w[0])) {
                QCOMPARE(token, 0);
                ++lowU;
            }
            if (target >= static_cast<double>(total - w[4])) {
                QCOMPARE(token, 4);  // the least likely token is last in index order
                ++highU;
            }
            differ += token != referenceDraw(row, plain, 3, step, true);
        }
        QVERIFY(lowU > 100 && highU > 10);
        QVERIFY(differ > 1000);  // the two walks really are different functions of u

        // Same distribution as the softmax (and as the descending walk): 20,000 draws.
        constexpr int kDraws = 20000;
        expectFrequencies(frequencies(row, plain, kDraws), softmax(row), kDraws);
        SamplingParams topK;
        topK.topK = 3;  // keeps tokens 1, 2, 3: renormalised softmax over them
        auto expected = softmax({row[1], row[2], row[3]});
        expectFrequencies(frequencies(row, topK, kDraws), {0.0, expected[0], expected[1], expected[2], 0.0}, kDraws);
        expectFrequencies(frequencies(rows[1], plain, kDraws), std::vector<double>(5, 0.2), kDraws);
        expectFrequencies(frequencies(rows[2], plain, 2000), {1.0, 0.0, 0.0, 0.0, 0.0}, 2000);
    }

    void topPWithFewDistinctProbabilities()
    {
        // The top-p cut without keys gathers one bucket of probabilities: all-equal rows (one
        // bucket of 103,424 tokens, cut inside it by the key radix), rows of a few repeated
        // values, and a peaked row whose cut falls in the top bucket.
        constexpr size_t kVocab = 103424;
        std::vector<std::vector<float>> rows;
        rows.emplace_back(kVocab, 0.5f);
        std::vector<float> few(kVocab);
        for (size_t i = 0; i < kVocab; ++i) few[i] = float(int(i * 2654435761u % 5)) * 0.25f;
        rows.push_back(few);
        std::vector<float> peaked = randomLogits(kVocab, 77, 1.0f);
        peaked[4242] = 14.0f;
        peaked[99] = 13.5f;
        rows.push_back(peaked);
        for (const auto& row : rows)
            for (float topP : {0.0f, 0.3f, 0.8f, 0.999f, 1.0f}) {
                SamplingParams params;
                params.temperature = 0.9f;
                params.topP = topP;
                for (int step = 0; step < 6; ++step)
                    QCOMPARE(draw(row, params, 17, step), referenceDraw(row, params, 17, step));
            }
    }

    void fullVocabularyRow()
    {
        // ERNIE's V: top-p without top-k, the expensive case, stays inside the nucleus.
        constexpr size_t kVocab = 103424;
        const auto logits = randomLogits(kVocab, 2024, 2.5f);
        SamplingParams params;
        params.temperature = 0.8f;
        params.topP = 0.9f;
        for (int step = 0; step < 20; ++step)
            QCOMPARE(draw(logits, params, 5, step), referenceDraw(logits, params, 5, step));
        params.topP = 1.0f;
        params.topK = 50;
        for (int step = 0; step < 20; ++step)
            QCOMPARE(draw(logits, params, 6, step), referenceDraw(logits, params, 6, step));
    }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
