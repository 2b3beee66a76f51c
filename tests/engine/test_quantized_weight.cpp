// QuantizedWeight and round-to-nearest quantization on random non-zero weights: every weight
// within half its group's scale of its dequantized value, fp16-exact scales, the documented
// nibble packing, dequantize() == value(), row concatenation, constant groups and bad arguments.
#include "engine/quantized_weight.h"
#include "engine/tensor_view.h"

#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

using namespace brook;

namespace {

// Rows of different magnitudes and a few outliers, so groups have different scales.
std::vector<float> randomWeights(std::mt19937& rng, int rows, int cols)
{
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> magnitude(0.01f, 2.0f);
    std::vector<float> w(size_t(rows) * size_t(cols));
    for (int n = 0; n < rows; ++n) {
        const float m = magnitude(rng);
        for (int k = 0; k < cols; ++k) {
            float v = normal(rng) * m;
            if (v == 0.0f) v = m;
            if ((n * 31 + k) % 97 == 0) v *= 6.0f;  // an outlier now and then
            w[size_t(n) * size_t(cols) + size_t(k)] = v;
        }
    }
    return w;
}

// Root-mean-square of w - dequantized(w), relative to the weights' RMS.
double relativeRmsError(const std::vector<float>& w, const QuantizedWeight& q)
{
    double err = 0, ref = 0;
    for (int n = 0; n < q.rows; ++n)
        for (int k = 0; k < q.cols; ++k) {
            const double x = w[size_t(n) * size_t(q.cols) + size_t(k)];
            err += (x - q.value(n, k)) * (x - q.value(n, k));
            ref += x * x;
        }
    return std::sqrt(err / ref);
}

}  // namespace

class TestQuantizedWeight : public QObject {
    Q_OBJECT
private slots:
    void rtnErrorIsWithinHalfAScale_data()
    {
        QTest::addColumn<int>("bits");
        QTest::addColumn<int>("groupSize");
        QTest::newRow("int4 g128") << 4 << 128;
        QTest::newRow("int4 g32") << 4 << 32;
        QTest::newRow("int8 g128") << 8 << 128;
        QTest::newRow("int8 g64") << 8 << 64;
    }
    void rtnErrorIsWithinHalfAScale()
    {
        QFETCH(int, bits);
        QFETCH(int, groupSize);
        std::mt19937 rng(uint32_t(bits * 1000 + groupSize));
        const int N = 24, K = 384;
        const std::vector<float> w = randomWeights(rng, N, K);
        auto q = quantizeRtn(w, N, K, bits, groupSize);
        QVERIFY2(q.ok(), q.ok() ? "" : q.error().c_str());
        QCOMPARE(q->rows, N);
        QCOMPARE(q->cols, K);
        QCOMPARE(q->bits, bits);
        QCOMPARE(q->groupsPerRow(), K / groupSize);
        QCOMPARE(q->packed.size(), size_t(N) * size_t(K) * size_t(bits) / 8);
        QCOMPARE(q->scales.size(), size_t(N) * size_t(K / groupSize));
        QCOMPARE(q->zeros.size(), q->scales.size());
        QCOMPARE(q->deviceBytes(), int64_t(N) * K * bits / 8 + int64_t(N) * (K / groupSize) * 3);

        const int maxCode = (1 << bits) - 1;
        double absErrorSum = 0, scaleSum = 0;
        for (int n = 0; n < N; ++n) {
            for (int g = 0; g < K / groupSize; ++g) {
                const float scale = q->scales[size_t(n) * size_t(K / groupSize) + size_t(g)];
                QVERIFY(scale > 0);
                QCOMPARE(fp16ToFloat(floatToFp16(scale)), scale);  // fp16-exact
                QVERIFY(q->zeros[size_t(n) * size_t(K / groupSize) + size_t(g)] <= maxCode);
                for (int k = g * groupSize; k < (g + 1) * groupSize; ++k) {
                    const float x = w[size_t(n) * size_t(K) + size_t(k)];
                    const double err = std::abs(double(x) - double(q->value(n, k)));
                    // Half a step, plus the rounding of x / scale in fp32.
                    if (err > 0.5 * scale * (1 + 1e-5) + 1e-6 * std::abs(x))
                        QFAIL(qPrintable(QString("row %1 k %2: w %3, dequantized %4, scale %5")
                                             .arg(n)
                                             .arg(k)
                                             .arg(x)
                                             .arg(q->value(n, k))
                                             .arg(scale)));
                    QVERIFY(q->code(n, k) <= maxCode);
                    absErrorSum += err;
                    scaleSum += scale;
                }
            }
        }
        // Round-to-nearest errors spread over [-scale/2, scale/2]: their mean is about scale/4.
        const double meanRatio = absErrorSum / scaleSum;
        QVERIFY2(meanRatio > 0.1 && meanRatio < 0.4, qPrintable(QString::number(meanRatio)));
    }

    void eightBitsAreMuchCloserThanFour()
    {
        std::mt19937 rng(7);
        const int N = 32, K = 256;
        const std::vector<float> w = randomWeights(rng, N, K);
        auto q4 = quantizeRtn(w, N, K, 4, 128);
        auto q8 = quantizeRtn(w, N, K, 8, 128);
        QVERIFY(q4.ok() && q8.ok());
        const double e4 = relativeRmsError(w, *q4), e8 = relativeRmsError(w, *q8);
        // One step is (max - min) / 15 vs / 255: 17x finer.
        QVERIFY2(e4 > 0.01 && e4 < 0.25, qPrintable(QString::number(e4)));
        QVERIFY2(e8 < e4 / 10, qPrintable(QString("int8 %1, int4 %2").arg(e8).arg(e4)));
    }

    // The packing the header documents, read straight from the bytes.
    void packingFollowsTheHeader()
    {
        std::mt19937 rng(11);
        const int N = 5, K = 64;
        const std::vector<float> w = randomWeights(rng, N, K);
        for (int bits : {4, 8}) {
            auto q = quantizeRtn(w, N, K, bits, 32);
            QVERIFY(q.ok());
            const int64_t rowBytes = K * bits / 8;
            QCOMPARE(q->packedRowBytes(), rowBytes);
            for (int n = 0; n < N; ++n)
                for (int k = 0; k < K; ++k) {
                    const uint8_t byte = q->packed[size_t(n * rowBytes + (bits == 8 ? k : k / 2))];
                    const int expected = bits == 8 ? byte : (k % 2 == 0 ? byte & 0xF : byte >> 4);
                    QCOMPARE(int(q->code(n, k)), expected);
                    const size_t g = size_t(n) * 2 + size_t(k / 32);
                    QCOMPARE(q->value(n, k), (float(expected) - float(q->zeros[g])) * q->scales[g]);
                }
        }
    }

    void dequantizeMatchesValue()
    {
        std::mt19937 rng(3);
        const int N = 9, K = 256;
        const std::vector<float> w = randomWeights(rng, N, K);
        for (int bits : {4, 8}) {
            auto q = quantizeRtn(w, N, K, bits, 64);
            QVERIFY(q.ok());
            std::vector<float> out(size_t(N) * size_t(K), std::nanf(""));
            dequantize(*q, out);
            for (int n = 0; n < N; ++n)
                for (int k = 0; k < K; ++k) QCOMPARE(out[size_t(n) * size_t(K) + size_t(k)], q->value(n, k));
        }
    }

    void concatRowsKeepsEveryRow()
    {
        std::mt19937 rng(5);
        const int K = 128;
        const int rows[] = {6, 2, 3};
        std::vector<QuantizedWeight> parts;
        for (int r : rows) {
            auto q = quantizeRtn(randomWeights(rng, r, K), r, K, 4, 64);
            QVERIFY(q.ok());
            parts.push_back(std::move(q).value());
        }
        auto fused = concatRows(parts);
        QVERIFY2(fused.ok(), fused.ok() ? "" : fused.error().c_str());
        QCOMPARE(fused->rows, 11);
        QCOMPARE(fused->cols, K);
        int base = 0;
        for (const QuantizedWeight& p : parts) {
            for (int n = 0; n < p.rows; ++n)
                for (int k = 0; k < K; ++k) {
                    QCOMPARE(fused->code(base + n, k), p.code(n, k));
                    QCOMPARE(fused->value(base + n, k), p.value(n, k));
                }
            base += p.rows;
        }
        auto other = quantizeRtn(randomWeights(rng, 2, K), 2, K, 4, 32);  // another group size
        QVERIFY(other.ok());
        parts.push_back(std::move(other).value());
        QVERIFY(!concatRows(parts).ok());
        QVERIFY(!concatRows({}).ok());
    }

    void constantGroupsStayFinite()
    {
        const int K = 64;
        std::vector<float> w(size_t(3) * K);
        for (int k = 0; k < K; ++k) {
            w[size_t(k)] = 0.0f;            // row 0: all zero
            w[size_t(K + k)] = 2.5f;        // row 1: one positive constant
            w[size_t(2 * K + k)] = -0.75f;  // row 2: one negative constant
        }
        for (int bits : {4, 8}) {
            auto q = quantizeRtn(w, 3, K, bits, 32);
            QVERIFY2(q.ok(), q.ok() ? "" : q.error().c_str());
            for (int n = 0; n < 3; ++n)
                for (int k = 0; k < K; ++k) {
                    const float v = q->value(n, k);
                    QVERIFY(std::isfinite(v));
                    const float scale = q->scales[size_t(n) * 2 + size_t(k / 32)];
                    QVERIFY(scale > 0);
                    QVERIFY(std::abs(v - w[size_t(n) * K + size_t(k)]) <= 0.5f * scale);
                }
            for (int k = 0; k < K; ++k) QCOMPARE(q->value(0, k), 0.0f);  // zero stays exactly zero
        }
    }

    void badArgumentsAreErrors()
    {
        const std::vector<float> w(size_t(4) * 64, 1.0f);
        QVERIFY(quantizeRtn(w, 4, 64, 4, 64).ok());
        auto bits3 = quantizeRtn(w, 4, 64, 3, 64);
        QVERIFY(!bits3.ok());
        QVERIFY2(bits3.error().find("bits") != std::string::npos, bits3.error().c_str());
        auto notDivisible = quantizeRtn(w, 4, 64, 4, 48);
        QVERIFY(!notDivisible.ok());
        QVERIFY2(notDivisible.error().find("48") != std::string::npos, notDivisible.error().c_str());
        const std::vector<float> odd(size_t(4) * 63, 1.0f);
        QVERIFY(!quantizeRtn(odd, 4, 63, 4, 63).ok());  // K odd
        QVERIFY(!quantizeRtn(w, 4, 64, 8, 0).ok());     // no group size
        QVERIFY(!quantizeRtn(w, 5, 64, 4, 64).ok());    // too few values for the shape
        std::vector<float> withNan = w;
        withNan[17] = std::nanf("");
        QVERIFY(!quantizeRtn(withNan, 4, 64, 4, 64).ok());
    }
};

QTEST_APPLESS_MAIN(TestQuantizedWeight)
#include "test_quantized_weight.moc"
