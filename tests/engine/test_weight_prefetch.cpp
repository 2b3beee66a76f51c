// The weight-streaming kernels' software prefetch switch (engine/cpu/weight_prefetch.h): choosing it by
// timing picks the faster candidate by median, and the switch changes no output bit.
#include "engine/cpu/cpu_features.h"
#include "engine/cpu/cpu_gemm.h"
#include "engine/cpu/cpu_matrix.h"
#include "engine/cpu/cpu_thread_pool.h"
#include "engine/cpu/weight_prefetch.h"
#include "engine/quantized_weight.h"

#include <QtTest/QtTest>

#include <random>
#include <vector>

using namespace brook;
using namespace brook::cpu;

namespace {

std::vector<float> randomFloats(size_t n, std::mt19937& rng, float scale)
{
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng);
    return v;
}

}  // namespace

class TestWeightPrefetch : public QObject {
    Q_OBJECT

private slots:
    void cleanup() { setWeightPrefetch(true); }  // the default, for whatever runs next

    // The median decides, not the best or the mean: one fast outlier of a candidate whose usual
    // time is slower does not win, nor does one slow outlier lose.
    void fastestOptionTakesTheLowestMedian()
    {
        std::vector<std::vector<double>> times = {{5.0, 1.0, 5.0}, {4.0, 100.0, 4.0}};
        std::vector<size_t> calls(2);
        std::vector<size_t> order;
        std::vector<double> medians;
        const size_t best = fastestOption(
            2, 3,
            [&](size_t o) {
                order.push_back(o);
                return times[o][calls[o]++];
            },
            &medians);
        QCOMPARE(best, size_t(1));
        QCOMPARE(medians, (std::vector<double>{5.0, 4.0}));
        // Alternating within each round, so a slow minute weighs on both.
        QCOMPARE(order, (std::vector<size_t>{0, 1, 0, 1, 0, 1}));

        times = {{3.0, 3.0, 9.0}, {1.0, 4.0, 4.0}};
        calls.assign(2, 0);
        QCOMPARE(fastestOption(2, 3, [&](size_t o) { return times[o][calls[o]++]; }), size_t(0));
        // A tie goes to the lower option.
        QCOMPARE(fastestOption(2, 2, [](size_t) { return 1.0; }), size_t(0));
    }

    void switchReadsBack()
    {
        setWeightPrefetch(false);
        QCOMPARE(weightPrefetch(), false);
        setWeightPrefetch(true);
        QCOMPARE(weightPrefetch(), true);
    }

    // The prefetch only moves data early: with and without it every int8 and int4 product is the
    // same bit for bit, at the few-token sizes that take the prefetching kernel and at a prompt's.
    void prefetchChangesNoOutputBit()
    {
        if (detectCpuIsa() < CpuIsa::Avx512Vnni) QSKIP("the prefetching kernel needs AVX-512 VNNI");
        std::mt19937 rng(7);
        const int N = 1024, K = 2048;
        CpuThreadPool pool(2);
        for (int bits : {8, 4}) {
            auto q = quantizeRtn(randomFloats(size_t(N) * K, rng, 0.05f), N, K, bits, 128);
            QVERIFY(q.ok());
            const CpuMatrix w = bits == 8 ? CpuMatrix::fromQ8(*q) : CpuMatrix::fromQ4(*q);
            for (int T : {1, 2, 5, 8, 20}) {
                const std::vector<float> x = randomFloats(size_t(T) * K, rng, 1.0f);
                std::vector<float> with(size_t(T) * N, NAN), without(size_t(T) * N, NAN);
                setWeightPrefetch(true);
                matmul(w, x.data(), with.data(), T, CpuIsa::Avx512Vnni, &pool);
                setWeightPrefetch(false);
                matmul(w, x.data(), without.data(), T, CpuIsa::Avx512Vnni, &pool);
                QVERIFY2(with == without, qPrintable(QString("int%1, T = %2").arg(bits).arg(T)));
            }
        }
    }

    // The same for the vdpbf16ps kernel, which every step of a bf16 model takes.
    void prefetchChangesNoBf16OutputBit()
    {
        if (detectCpuIsa() < CpuIsa::Avx512Bf16) QSKIP("the prefetching bf16 kernel needs AVX-512 BF16");
        std::mt19937 rng(8);
        const int N = 1024, K = 2048;
        const std::vector<float> values = randomFloats(size_t(N) * K, rng, 0.05f);
        const CpuMatrix w = CpuMatrix::fromBf16(N, K, [&](int n, uint16_t* row) {
            for (int k = 0; k < K; ++k) row[k] = cpu::floatToBf16(values[size_t(n) * K + k]);
        });
        CpuThreadPool pool(2);
        for (int T : {1, 4, 8, 20}) {
            const std::vector<float> x = randomFloats(size_t(T) * K, rng, 1.0f);
            std::vector<float> with(size_t(T) * N, NAN), without(size_t(T) * N, NAN);
            setWeightPrefetch(true);
            matmul(w, x.data(), with.data(), T, CpuIsa::Avx512Bf16, &pool);
            setWeightPrefetch(false);
            matmul(w, x.data(), without.data(), T, CpuIsa::Avx512Bf16, &pool);
            QVERIFY2(with == without, qPrintable(QString("T = %1").arg(T)));
        }
    }
};

QTEST_APPLESS_MAIN(TestWeightPrefetch)
#include "test_weight_prefetch.moc"
