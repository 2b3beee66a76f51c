// cpu/sampler_kernels against the scalar definitions of engine/sampler_math.h, bit for bit, on
// every path this CPU supports (scalar, AVX2, AVX-512): probRow on random rows, on every edge of
// samplerProbBits (0, -0, positive, -87 and just above, -inf, NaN, subnormals, |x| < 2^-32) and on
// a sweep of the float line, and buildKeys'
// keys (order, count, token ids past the vector part) and exact total mass, bucketMasses' per-bucket
// masses and keysInBucket's keys, and drawIndex's token. Equality is the
// contract: the seeded sampler must pick the same token whichever path ran.
#include "engine/cpu/sampler_kernels.h"
#include "engine/sampler_math.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace brook;
using namespace brook::cpu;

class TestCpuSamplerKernels : public QObject {
    Q_OBJECT

private slots:
    void probRowIsBitIdentical()
    {
        std::mt19937 rng(5);
        std::vector<float> logits(103424 + 13);  // after the 4 x 8-lane part: one 8-lane group, then 5 scalar
        std::normal_distribution<float> dist(0.0f, 6.0f);
        for (float& f : logits) f = dist(rng);
        const float edges[] = {0.0f,
                               -0.0f,
                               1.0f,
                               87.0f,
                               86.0f,
                               1e-40f,
                               -1e-40f,
                               1e-12f,
                               3e-10f,
                               -3e-10f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               80.0f,
                               86.99f,
                               87.01f,
                               -200.0f,
                               200.0f};
        for (size_t i = 0; i < std::size(edges); ++i) logits[i * 7] = edges[i];
        for (float temperature : {1.0f, 0.8f, 0.3f, 1.7f}) {
            float maxLogit = -INFINITY;
            for (float l : logits)
                if (l > maxLogit && std::isfinite(l)) maxLogit = l;
            const float maxScaled = maxLogit / temperature;
            std::vector<uint32_t> want(logits.size());
            for (size_t i = 0; i < logits.size(); ++i) want[i] = samplerProbBits(logits[i] / temperature - maxScaled);
            for (CpuIsa isa : supportedCpuIsas()) {
                std::vector<uint32_t> got(logits.size(), 0xDEADBEEF);
                probRow(logits.data(), logits.size(), temperature, maxScaled, got.data(), isa);
                for (size_t i = 0; i < logits.size(); ++i)
                    QVERIFY2(got[i] == want[i], qPrintable(QString("%1 T %2 logit %3: %4 != %5")
                                                               .arg(cpuIsaName(isa))
                                                               .arg(temperature)
                                                               .arg(logits[i], 0, 'g', 9)
                                                               .arg(got[i])
                                                               .arg(want[i])));
            }
        }
    }

    // A sweep of the float line over [-87, 0]: every 997th bit pattern (every exponent, subnormals
    // and |x| < 2^-32 included), and the neighbours of each integer, where the vector paths' split
    // of -x into whole and fractional parts changes. Temperature 1 and max 0 make x the logit.
    void probRowMatchesOnAFloatSweep()
    {
        std::vector<float> logits;
        for (uint32_t bits = 0x80000000u; bits <= 0xC2AE0000u; bits += 997) logits.push_back(bitsFloat(bits));
        for (int k = 0; k <= 87; ++k)
            for (int d = -2; d <= 2; ++d) logits.push_back(bitsFloat(floatBits(-float(k)) + uint32_t(d)));
        std::vector<uint32_t> want(logits.size());
        for (size_t i = 0; i < logits.size(); ++i) want[i] = samplerProbBits(logits[i] / 1.0f - 0.0f);
        for (CpuIsa isa : supportedCpuIsas()) {
            std::vector<uint32_t> got(logits.size(), 0xDEADBEEF);
            probRow(logits.data(), logits.size(), 1.0f, 0.0f, got.data(), isa);
            for (size_t i = 0; i < logits.size(); ++i)
                QVERIFY2(got[i] == want[i], qPrintable(QString("%1 logit %2 (bits %3): %4 != %5")
                                                           .arg(cpuIsaName(isa))
                                                           .arg(logits[i], 0, 'g', 9)
                                                           .arg(floatBits(logits[i]), 0, 16)
                                                           .arg(got[i])
                                                           .arg(want[i])));
        }
    }

    void buildKeysIsIdentical()
    {
        std::mt19937 rng(9);
        for (size_t V : {size_t(3), size_t(103424), size_t(1001)}) {
            std::vector<uint32_t> probs(V);
            std::normal_distribution<float> dist(-20.0f, 15.0f);
            for (uint32_t& p : probs) p = samplerProbBits(std::min(dist(rng), 0.0f));
            probs[0] = 0x3F800000u;  // the top token
            const int shift = samplerWeightShift(int(V));
            const uint32_t minBits = floatBits(1.0f) - (uint32_t(shift) << 23);
            std::vector<uint64_t> want;
            uint64_t wantMass = 0;
            for (size_t i = 0; i < V; ++i) {
                if (probs[i] >= minBits) want.push_back((uint64_t(probs[i]) << 32) | uint32_t(~uint32_t(i)));
                wantMass += samplerWeight(probs[i], shift);
            }
            if (V > 100) QVERIFY(want.size() > 0 && want.size() < V);  // some tokens fall below the cut
            for (CpuIsa isa : supportedCpuIsas()) {
                std::vector<uint64_t> keys(V);
                uint64_t mass = 0;
                keys.resize(buildKeys(probs.data(), V, minBits, shift, keys.data(), &mass, isa));
                QVERIFY2(keys == want, cpuIsaName(isa));
                QCOMPARE(mass, wantMass);
            }
        }
    }

    void bucketMassesAndKeysAreIdentical()
    {
        std::mt19937 rng(13);
        for (size_t V : {size_t(5), size_t(103424), size_t(1003)}) {
            std::vector<uint32_t> probs(V);
            std::normal_distribution<float> dist(-20.0f, 15.0f);
            for (uint32_t& p : probs) p = samplerProbBits(std::min(dist(rng), 0.0f));
            probs[0] = 0x3F800000u;  // the top token: the last bucket
            probs[V - 1] = 0x3F800000u;
            const int shift = samplerWeightShift(int(V));
            const uint32_t minBits = floatBits(1.0f) - (uint32_t(shift) << 23);
            if (V > 100) probs[V / 2] = minBits;  // the lowest candidate: bucket 0
            const size_t numBuckets = probBucketCount(minBits);
            std::vector<uint64_t> wantMasses(numBuckets, 0);
            uint64_t wantTotal = 0;
            size_t wantCandidates = 0;
            for (uint32_t p : probs) {
                wantTotal += samplerWeight(p, shift);
                if (p < minBits) continue;
                ++wantCandidates;
                wantMasses[(p >> kProbBucketShift) - (minBits >> kProbBucketShift)] += samplerWeight(p, shift);
            }
            QVERIFY(wantMasses.back() >= 2 * samplerWeight(0x3F800000u, shift));
            for (CpuIsa isa : supportedCpuIsas()) {
                std::vector<uint64_t> masses(numBuckets, 0);
                size_t candidates = 0;
                QCOMPARE(bucketMasses(probs.data(), V, minBits, shift, masses.data(), &candidates, isa), wantTotal);
                QVERIFY2(masses == wantMasses, cpuIsaName(isa));
                QCOMPARE(candidates, wantCandidates);
                candidates = 0;
                QCOMPARE(bucketMasses(probs.data(), V, minBits, shift, nullptr, &candidates, isa), wantTotal);
                QCOMPARE(candidates, wantCandidates);
                // Every non-empty bucket's keys, and one empty bucket's none.
                size_t collected = 0;
                for (size_t b = 0; b < numBuckets; ++b) {
                    const uint32_t bucketBits = uint32_t(b) + (minBits >> kProbBucketShift);
                    std::vector<uint64_t> want;
                    for (size_t i = 0; i < V; ++i)
                        if ((probs[i] >> kProbBucketShift) == bucketBits)
                            want.push_back((uint64_t(probs[i]) << 32) | uint32_t(~uint32_t(i)));
                    if (want.empty() && b % 64 != 0) continue;
                    std::vector<uint64_t> keys(V);
                    keys.resize(keysInBucket(probs.data(), V, bucketBits, keys.data(), isa));
                    QVERIFY2(keys == want, qPrintable(QString("%1 bucket %2").arg(cpuIsaName(isa)).arg(b)));
                    collected += keys.size();
                }
                QVERIFY(collected <= wantCandidates);
            }
        }
    }

    void maxValueIsTheScalarMaximum()
    {
        std::mt19937 rng(2);
        std::normal_distribution<float> dist(0.0f, 5.0f);
        for (size_t n : {size_t(1), size_t(17), size_t(103424)}) {
            std::vector<float> v(n);
            for (float& f : v) f = dist(rng);
            v[n / 2] = std::numeric_limits<float>::quiet_NaN();  // never wins
            float want = -INFINITY;
            for (float f : v)
                if (f > want) want = f;
            for (CpuIsa isa : supportedCpuIsas()) QCOMPARE(maxValue(v.data(), n, isa), want);
            std::fill(v.begin(), v.end(), -INFINITY);
            for (CpuIsa isa : supportedCpuIsas()) QCOMPARE(maxValue(v.data(), n, isa), -INFINITY);
        }
    }

    void drawIndexIsIdentical()
    {
        std::mt19937 rng(21);
        const size_t V = 103424 + 3;
        std::vector<uint32_t> probs(V);
        std::normal_distribution<float> dist(-25.0f, 12.0f);
        for (uint32_t& p : probs) p = samplerProbBits(std::min(dist(rng), 0.0f));
        probs[V / 2] = 0x3F800000u;
        const int shift = samplerWeightShift(int(V));
        const uint32_t minBits = floatBits(1.0f) - (uint32_t(shift) << 23);
        uint64_t mass = 0;
        for (uint32_t p : probs) mass += samplerWeight(p, shift);
        std::uniform_real_distribution<double> uniform(0.0, 1.0);
        // Floors: none, a mid probability (some tokens cut), just below the top key, and u near 1
        // (the walk runs to the end: the last kept token).
        const uint64_t floors[] = {0, uint64_t(samplerProbBits(-3.0f)) << 32, (uint64_t(0x3F800000u) << 32)};
        for (uint64_t floor : floors) {
            for (int draw = 0; draw < 40; ++draw) {
                const double target = (draw == 0 ? 1.0 : uniform(rng)) * double(mass);
                const int32_t want = drawIndex(probs.data(), V, minBits, floor, shift, target, CpuIsa::Scalar);
                for (CpuIsa isa : supportedCpuIsas())
                    QCOMPARE(drawIndex(probs.data(), V, minBits, floor, shift, target, isa), want);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestCpuSamplerKernels)
#include "test_cpu_sampler_kernels.moc"
