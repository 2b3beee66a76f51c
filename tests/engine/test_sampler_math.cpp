// Tests for engine/sampler_math.h, the integer-only math the CPU and GPU samplers share:
// samplerProbBits against exp() in double (within 1 ulp, monotone, exact at the ends),
// samplerWeight against floor(p * 2^shift), and orderedFloatBits' order.
#include "engine/sampler_math.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace brook;

class TestSamplerMath : public QObject {
    Q_OBJECT

private slots:
    void probBitsIsExpWithinOneUlp()
    {
        std::mt19937_64 rng(17);
        int exact = 0;
        constexpr int kSamples = 1000000;
        for (int n = 0; n < kSamples; ++n) {
            // Spread over magnitudes: tiny, moderate and near the cut-off.
            const double scale = std::pow(10.0, std::uniform_real_distribution<double>(-9.0, std::log10(87.0))(rng));
            const auto x = static_cast<float>(-std::uniform_real_distribution<double>(0.0, 1.0)(rng) * scale);
            const float p = bitsFloat(samplerProbBits(x));
            const double want = std::exp(static_cast<double>(x));
            const auto rounded = static_cast<float>(want);
            const float ulp = std::nextafter(rounded, 2.0f) - rounded;
            QVERIFY2(
                std::abs(p - want) <= ulp,
                qPrintable(QString("x %1: got %2, exp %3").arg(x, 0, 'g', 9).arg(p, 0, 'g', 9).arg(want, 0, 'g', 17)));
            exact += p == rounded;
        }
        QVERIFY2(exact > kSamples * 9 / 10, qPrintable(QString("only %1 correctly rounded").arg(exact)));
    }

    void probBitsIsMonotone()
    {
        std::mt19937_64 rng(3);
        std::vector<float> xs(200000);
        for (float& x : xs) x = -std::uniform_real_distribution<float>(0.0f, 88.0f)(rng);
        for (int k = 0; k < 1000; ++k) xs.push_back(-static_cast<float>(k) * 1e-9f);
        std::sort(xs.begin(), xs.end());
        for (size_t i = 1; i < xs.size(); ++i)
            QVERIFY2(samplerProbBits(xs[i - 1]) <= samplerProbBits(xs[i]),
                     qPrintable(QString("p(%1) > p(%2)").arg(xs[i - 1], 0, 'g', 9).arg(xs[i], 0, 'g', 9)));
    }

    void probBitsEdges()
    {
        const float inf = std::numeric_limits<float>::infinity();
        QCOMPARE(bitsFloat(samplerProbBits(0.0f)), 1.0f);
        QCOMPARE(bitsFloat(samplerProbBits(-0.0f)), 1.0f);
        QCOMPARE(samplerProbBits(-inf), 0u);
        QCOMPARE(samplerProbBits(std::numeric_limits<float>::quiet_NaN()), 0u);
        QCOMPARE(samplerProbBits(-87.0f), 0u);
        QCOMPARE(samplerProbBits(-1000.0f), 0u);
        const float smallest = bitsFloat(samplerProbBits(-86.99f));
        QVERIFY(std::isnormal(smallest));
        QVERIFY(std::abs(smallest / std::exp(static_cast<double>(-86.99f)) - 1.0) < 1e-6);
    }

    void weightsAreFlooredFixedPoint()
    {
        QCOMPARE(samplerWeightShift(103424), 46);
        QCOMPARE(samplerWeightShift(1000), 53);
        for (int vocab : {2, 1000, 103424, 131072, 1 << 20}) {
            const int shift = samplerWeightShift(vocab);
            // V weights of at most 2^shift (p = 1) stay below 2^63.
            QVERIFY(static_cast<long double>(vocab) * std::ldexp(1.0L, shift) < std::ldexp(1.0L, 63));
            QCOMPARE(samplerWeight(floatBits(1.0f), shift), uint64_t{1} << shift);
        }
        std::mt19937_64 rng(8);
        const int shift = samplerWeightShift(103424);
        for (int n = 0; n < 100000; ++n) {
            const uint32_t bits = samplerProbBits(-std::uniform_real_distribution<float>(0.0f, 40.0f)(rng));
            const long double want = std::floor(std::ldexp(static_cast<long double>(bitsFloat(bits)), shift));
            QCOMPARE(static_cast<long double>(samplerWeight(bits, shift)), want);
        }
        QCOMPARE(samplerWeight(0u, shift), uint64_t{0});
        QCOMPARE(samplerWeight(floatBits(std::ldexp(1.0f, -shift)), shift), uint64_t{1});
        QCOMPARE(samplerWeight(floatBits(std::ldexp(1.0f, -shift - 1)), shift), uint64_t{0});
    }

    void orderedBitsFollowTheFloats()
    {
        const float inf = std::numeric_limits<float>::infinity();
        std::vector<float> values = {-inf, -1e30f, -2.5f, -1e-40f, -0.0f, 1e-40f, 0.5f, 3.0f, 1e30f, inf};
        for (size_t i = 1; i < values.size(); ++i)
            QVERIFY(orderedFloatBits(values[i - 1]) < orderedFloatBits(values[i]) ||
                    (values[i - 1] == 0.0f && values[i] == 0.0f));
        QCOMPARE(orderedFloatBits(std::numeric_limits<float>::quiet_NaN()), 0u);
        QVERIFY(orderedFloatBits(-inf) > 0u);
    }
};

QTEST_APPLESS_MAIN(TestSamplerMath)
#include "test_sampler_math.moc"
