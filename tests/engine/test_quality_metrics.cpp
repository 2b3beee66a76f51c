// Tests for engine/quality_metrics.h (brook-bench quality's arithmetic): KL of identical and of
// shifted rows is 0, KL against closed forms (two tokens; uniform against one boosted token),
// KL is asymmetric and non-negative, top-1 agreement counting, perplexity of known
// distributions, and that addSequence pairs row i with token i + 1 and skips the last row.
#include "engine/quality_metrics.h"

#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

using namespace brook;

namespace {

std::vector<float> randomRow(std::mt19937& rng, int V, float spread)
{
    std::normal_distribution<float> dist(0.0f, spread);
    std::vector<float> row(static_cast<size_t>(V));
    for (float& x : row) x = dist(rng);
    return row;
}

}  // namespace

class TestQualityMetrics : public QObject {
    Q_OBJECT
private slots:
    void identicalAndShiftedRowsHaveZeroKl()
    {
        std::mt19937 rng(7);
        for (int trial = 0; trial < 20; ++trial) {
            const std::vector<float> row = randomRow(rng, 1000, 3.0f);
            QCOMPARE(klDivergence(row, row), 0.0);
            std::vector<float> shifted = row;
            for (float& x : shifted) x += 17.25f;  // softmax is shift-invariant
            QVERIFY2(klDivergence(row, shifted) < 1e-9, qPrintable(QString::number(klDivergence(row, shifted))));
        }
    }

    void twoTokenClosedForm()
    {
        // P = (1/2, 1/2), Q = (3/4, 1/4): KL = 1/2 ln(2/3) + 1/2 ln 2 = 1/2 ln(4/3).
        const std::vector<float> p = {0.0f, 0.0f};
        const std::vector<float> q = {float(std::log(3.0)), 0.0f};
        QVERIFY(std::abs(klDivergence(p, q) - 0.5 * std::log(4.0 / 3.0)) < 1e-7);
        // And the other way round: KL(Q || P) = 3/4 ln(3/2) + 1/4 ln(1/2), a different number.
        const double reverse = 0.75 * std::log(1.5) + 0.25 * std::log(0.5);
        QVERIFY(std::abs(klDivergence(q, p) - reverse) < 1e-7);
        QVERIFY(std::abs(reverse - 0.5 * std::log(4.0 / 3.0)) > 1e-3);
    }

    void uniformAgainstOneBoostedToken()
    {
        // P uniform over V; Q gives token 0 logit c, the others 0:
        // KL = ln(e^c + V - 1) - ln V - c / V.
        std::mt19937 rng(11);
        for (int trial = 0; trial < 10; ++trial) {
            const int V = std::uniform_int_distribution<int>(2, 5000)(rng);
            const double c = std::uniform_real_distribution<double>(-8.0, 8.0)(rng);
            std::vector<float> p(size_t(V), 0.0f), q(size_t(V), 0.0f);
            q[0] = float(c);
            const double want = std::log(std::exp(double(q[0])) + V - 1) - std::log(double(V)) - double(q[0]) / V;
            QVERIFY2(std::abs(klDivergence(p, q) - want) < 1e-9 * std::max(1.0, want),
                     qPrintable(QString("V %1 c %2: %3 vs %4").arg(V).arg(c).arg(klDivergence(p, q)).arg(want)));
        }
    }

    void klIsNonNegativeAndLogSoftmaxNormalised()
    {
        std::mt19937 rng(5);
        for (int trial = 0; trial < 20; ++trial) {
            const std::vector<float> a = randomRow(rng, 300, 4.0f), b = randomRow(rng, 300, 4.0f);
            QVERIFY(klDivergence(a, b) > 0.0);
            double sum = 0.0;
            for (double lp : logSoftmax(a)) sum += std::exp(lp);
            QVERIFY(std::abs(sum - 1.0) < 1e-12);
        }
    }

    void countsTopOneAgreement()
    {
        std::mt19937 rng(3);
        const int V = 50, n = 10;
        QualityMetrics metrics;
        int expected = 0;
        for (int i = 0; i < n; ++i) {
            const std::vector<float> ref = randomRow(rng, V, 1.0f);
            std::vector<float> cand = ref;
            const int top = argmaxIndex(ref);
            if (i % 3 == 0) cand[size_t((top + 1) % V)] = ref[size_t(top)] + 1.0f;  // a different argmax
            else ++expected;
            metrics.add(ref, cand, i % V);
        }
        const QualitySummary s = metrics.summary();
        QCOMPARE(s.positions, int64_t(n));
        QCOMPARE(s.top1Agreement, double(expected) / n);
        QVERIFY(s.meanKl > 0.0);
    }

    void perplexityOfKnownDistributions()
    {
        // Uniform logits over V: perplexity V. Logits (ln 2, 0, 0) give the next token (the
        // first) probability 1/2: perplexity 2; uniform over 3 tokens: perplexity 3.
        const int V = 64;
        QualityMetrics uniform;
        const std::vector<float> flat(size_t(V), 0.5f);
        for (int i = 0; i < 5; ++i) uniform.add(flat, flat, i);
        QVERIFY(std::abs(uniform.summary().referencePerplexity - V) < 1e-9 * V);
        QVERIFY(std::abs(uniform.summary().perplexityRatio() - 1.0) < 1e-12);

        QualityMetrics half;
        const std::vector<float> ref = {float(std::log(2.0)), 0.0f, 0.0f};  // (1/2, 1/4, 1/4)
        const std::vector<float> cand = {0.0f, 0.0f, 0.0f};                 // (1/3, 1/3, 1/3)
        half.add(ref, cand, 0);
        const QualitySummary s = half.summary();
        QVERIFY(std::abs(s.referencePerplexity - 2.0) < 1e-6);
        QVERIFY(std::abs(s.candidatePerplexity - 3.0) < 1e-6);
        QVERIFY(std::abs(s.perplexityRatio() - 1.5) < 1e-6);
    }

    void sequencePairsRowsWithTheFollowingToken()
    {
        std::mt19937 rng(9);
        const int V = 20, n = 6;
        std::vector<float> ref, cand;
        for (int i = 0; i < n; ++i) {
            const std::vector<float> a = randomRow(rng, V, 2.0f), b = randomRow(rng, V, 2.0f);
            ref.insert(ref.end(), a.begin(), a.end());
            cand.insert(cand.end(), b.begin(), b.end());
        }
        const std::vector<int32_t> tokens = {4, 9, 1, 17, 0, 3};
        QualityMetrics bySequence, byHand;
        bySequence.addSequence(ref, cand, tokens, V);
        for (int i = 0; i + 1 < n; ++i)
            byHand.add(std::span<const float>(ref).subspan(size_t(i * V), V),
                       std::span<const float>(cand).subspan(size_t(i * V), V), tokens[size_t(i + 1)]);
        const QualitySummary a = bySequence.summary(), b = byHand.summary();
        QCOMPARE(a.positions, int64_t(n - 1));
        QCOMPARE(a.meanKl, b.meanKl);
        QCOMPARE(a.referencePerplexity, b.referencePerplexity);
        QCOMPARE(a.candidatePerplexity, b.candidatePerplexity);
        QCOMPARE(a.top1Agreement, b.top1Agreement);
    }
};

QTEST_APPLESS_MAIN(TestQualityMetrics)
#include "test_quality_metrics.moc"
