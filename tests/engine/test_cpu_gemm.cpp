// matmul (src/engine/cpu/cpu_gemm.h) on every vector path this CPU supports, against a double
// reference built from the matrix's exact values, for bf16 and int8 weights, at small, ragged
// (N not a multiple of 16, odd K) and real ERNIE-0.3B sizes, T from 1 (decode) to 33 (prefill).
//
// Tolerances are error bounds, not fitted constants. With u = 2^-24 and S = sum_k |w_nk x_tk|:
//  - fp32 widening paths (and scalar): the products are exact in fp32 (a bf16 value times an
//    fp32 value has at most 8 + 24 significant bits... rounded once), and any summation order of
//    K terms is within gamma_K = K u / (1 - K u) of S; we allow 2 gamma_K S.
//  - fp32 weights (F32): the products round once each, so 2 gamma_K S again (gamma_{K+1} < 2 gamma_K).
//  - vdpbf16ps (Bf16Arithmetic::RoundedActivations on Avx512Bf16): x is first rounded to bf16, which moves
//    each product by at most 2^-9 of itself (round to nearest, 8-bit significand), so the result
//    is within 2^-9 S + 2 gamma_K S; we allow 2^-8 S + 2 gamma_K S.
//  - int8: activations are quantized too (per block of 32, cpu_gemm_q8.h); every path must
//    equal the scalar reference bit for bit, and the reference is held to the quantization's
//    error bound (see int8EveryPathMatchesTheDequantizedProduct).
// A wrong row, pair or group mapping is off by O(S), far outside every bound.
// And every path is batch-invariant: a row of x gives the same bits whatever T and whatever the
// other rows (everyRowComesOutAsIfAlone).
#include "engine/cpu/cpu_features.h"
#include "engine/cpu/cpu_gemm.h"
#include "engine/cpu/cpu_gemm_kernels.h"
#include "engine/cpu/cpu_gemm_q8.h"
#include "engine/cpu/cpu_matrix.h"
#include "engine/quantized_weight.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

using namespace brook;
using namespace brook::cpu;

namespace {

std::vector<float> randomFloats(size_t n, std::mt19937& rng, float scale = 1.0f)
{
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng);
    return v;
}

CpuMatrix randomBf16(int N, int K, std::mt19937& rng)
{
    const std::vector<float> values = randomFloats(size_t(N) * K, rng, 0.05f);
    return CpuMatrix::fromBf16(N, K, [&](int n, uint16_t* row) {
        for (int k = 0; k < K; ++k) row[k] = floatToBf16(values[size_t(n) * K + k]);
    });
}

double gamma(int K) { return K * 0x1p-24 / (1.0 - K * 0x1p-24); }

// Checks out [T, N] against the exact product with tolerance (relative * S + 1e-30) per element.
bool checkAgainstExact(const CpuMatrix& w, const std::vector<float>& x, const std::vector<float>& out, int T,
                       double relative, QString& why)
{
    const int N = w.rows(), K = w.cols();
    for (int t = 0; t < T; ++t) {
        for (int n = 0; n < N; ++n) {
            double exact = 0.0, S = 0.0;
            for (int k = 0; k < K; ++k) {
                const double p = double(w.at(n, k)) * x[size_t(t) * K + k];
                exact += p;
                S += std::abs(p);
            }
            const double got = out[size_t(t) * N + n];
            if (!(std::abs(got - exact) <= relative * S + 1e-30)) {
                why = QString("t %1 n %2: got %3, exact %4, bound %5")
                          .arg(t)
                          .arg(n)
                          .arg(got, 0, 'g', 9)
                          .arg(exact, 0, 'g', 9)
                          .arg(relative * S, 0, 'g', 3);
                return false;
            }
        }
    }
    return true;
}

}  // namespace

class TestCpuGemm : public QObject {
    Q_OBJECT

private slots:
    void isaOverrideNeverRaisesThePath()
    {
        QCOMPARE(resolveCpuIsa(nullptr, CpuIsa::Avx512), CpuIsa::Avx512);
        QCOMPARE(resolveCpuIsa("", CpuIsa::Avx2), CpuIsa::Avx2);
        QCOMPARE(resolveCpuIsa("scalar", CpuIsa::Avx512Bf16), CpuIsa::Scalar);
        QCOMPARE(resolveCpuIsa("avx2", CpuIsa::Avx512Bf16), CpuIsa::Avx2);
        QCOMPARE(resolveCpuIsa("avx512bf16", CpuIsa::Avx2), CpuIsa::Avx2);  // above the CPU: clamped
        QCOMPARE(resolveCpuIsa("sse9", CpuIsa::Avx512), CpuIsa::Avx512);    // unknown: the best
        QCOMPARE(supportedCpuIsas().front(), CpuIsa::Scalar);
        QCOMPARE(supportedCpuIsas().back(), detectCpuIsa());
    }

    void matrixLayoutKeepsEveryValue()
    {
        std::mt19937 rng(3);
        const int N = 37, K = 9;  // a partial block and an odd K (a padded pair)
        const std::vector<float> values = randomFloats(size_t(N) * K, rng);
        const CpuMatrix m = CpuMatrix::fromBf16(N, K, [&](int n, uint16_t* row) {
            for (int k = 0; k < K; ++k) row[k] = floatToBf16(values[size_t(n) * K + k]);
        });
        for (int n = 0; n < N; ++n)
            for (int k = 0; k < K; ++k) QCOMPARE(m.at(n, k), bf16ToFloat(floatToBf16(values[size_t(n) * K + k])));
        QCOMPARE(m.bytes(), int64_t(3 * 16 * 5 * 2 * 2));  // 3 blocks x 5 pairs x 16 rows x 2 values x 2 bytes
    }

    void bf16EveryPathMatchesTheExactProduct_data()
    {
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("T");
        for (int T : {1, 2, 3, 5, 8, 9, 16, 33}) {
            QTest::addRow("37x10 T%d", T) << 37 << 10 << T;
            QTest::addRow("20x9 T%d", T) << 20 << 9 << T;  // odd K: the scalar kernel on every path
        }
        for (int T : {1, 4, 8, 17}) {
            QTest::addRow("qkv 1280x1024 T%d", T) << 1280 << 1024 << T;
            QTest::addRow("down 1024x3072 T%d", T) << 1024 << 3072 << T;
        }
    }

    void bf16EveryPathMatchesTheExactProduct()
    {
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(int, T);
        std::mt19937 rng(uint32_t(N * 7919 + K * 31 + T));
        const CpuMatrix w = randomBf16(N, K, rng);
        const std::vector<float> x = randomFloats(size_t(T) * K, rng);
        CpuThreadPool pool(3);
        for (CpuIsa isa : supportedCpuIsas()) {
            std::vector<float> exactMode(size_t(T) * N, NAN);
            matmul(w, x.data(), exactMode.data(), T, isa, &pool, nullptr, Bf16Arithmetic::Fp32);
            for (Bf16Arithmetic arithmetic : {Bf16Arithmetic::RoundedActivations, Bf16Arithmetic::Fp32}) {
                const QString where = QString(cpuIsaName(isa)) +
                                      (arithmetic == Bf16Arithmetic::Fp32 ? " fp32" : " rounded activations");
                std::vector<float> out(size_t(T) * N, NAN), pooled(size_t(T) * N, NAN);
                matmul(w, x.data(), out.data(), T, isa, nullptr, nullptr, arithmetic);
                matmul(w, x.data(), pooled.data(), T, isa, &pool, nullptr, arithmetic);
                QVERIFY2(pooled == out, qPrintable(where));  // the split over threads changes no sum
                const bool dot =
                    isa == CpuIsa::Avx512Bf16 && arithmetic == Bf16Arithmetic::RoundedActivations && K % 2 == 0;
                // Only vdpbf16ps computes otherwise than the exact mode (--dtype float32).
                QVERIFY2((out != exactMode) == dot, qPrintable(where + (dot ? ": the same as fp32" : ": not fp32")));
                QString why;
                QVERIFY2(checkAgainstExact(w, x, out, T, (dot ? 0x1p-8 : 0.0) + 2 * gamma(K), why),
                         qPrintable(where + ": " + why));
            }
        }
    }

    void bf16DotKernelMatchesItsScalarReference()
    {
        if (detectCpuIsa() < CpuIsa::Avx512Bf16) QSKIP("this CPU has no AVX-512 BF16");
        std::mt19937 rng(11);
        const int N = 1024 + 16 + 5, K = 1024, T = 19, P = K / 2;
        const CpuMatrix w = randomBf16(N, K, rng);
        const std::vector<float> x = randomFloats(size_t(T) * K, rng);
        std::vector<uint32_t> scalarPairs(size_t(T) * P), vectorPairs(size_t(T) * P);
        kernels::toBf16PairsScalar(x.data(), T, K, scalarPairs.data());
        kernels::toBf16PairsAvx512Bf16(x.data(), T, K, vectorPairs.data());
        QVERIFY(scalarPairs == vectorPairs);  // normal numbers: the same round-to-nearest-even
        for (int k : {1, 9, 16, 37, 48}) {    // masked tails, an odd K's zero high half
            const std::vector<float> xk = randomFloats(size_t(3) * k, rng);
            std::vector<uint32_t> a(size_t(3) * ((k + 1) / 2), 7u), b(a);
            kernels::toBf16PairsScalar(xk.data(), 3, k, a.data());
            kernels::toBf16PairsAvx512Bf16(xk.data(), 3, k, b.data());
            QVERIFY2(a == b, qPrintable(QString("K %1").arg(k)));
        }
        std::vector<float> want(size_t(T) * N), got(size_t(T) * N);
        kernels::bf16DotScalar(w, scalarPairs.data(), T, want.data(), 0, w.numBlocks());
        kernels::bf16DotAvx512(w, vectorPairs.data(), T, got.data(), 0, w.numBlocks());
        for (int t = 0; t < T; ++t)
            for (int n = 0; n < N; ++n) {
                double S = 0.0;
                for (int k = 0; k < K; ++k) {
                    const uint32_t pair = scalarPairs[size_t(t) * P + k / 2];
                    S += std::abs(double(w.at(n, k)) * bf16ToFloat(uint16_t(k % 2 ? pair >> 16 : pair)));
                }
                const double diff = std::abs(double(got[size_t(t) * N + n]) - want[size_t(t) * N + n]);
                QVERIFY2(diff <= 4 * gamma(K) * S + 1e-30,
                         qPrintable(QString("t %1 n %2: diff %3").arg(t).arg(n).arg(diff)));
            }
    }

    void f32EveryPathMatchesTheExactProduct_data()
    {
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("T");
        for (int T : {1, 2, 3, 5, 8, 9, 33}) {
            QTest::addRow("37x10 T%d", T) << 37 << 10 << T;  // a partial block; K < 16 and not a multiple of 8
            QTest::addRow("20x45 T%d", T) << 20 << 45 << T;  // masked tails on every path
            QTest::addRow("qkv 1280x1024 T%d", T) << 1280 << 1024 << T;
        }
    }

    void f32EveryPathMatchesTheExactProduct()
    {
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(int, T);
        std::mt19937 rng(uint32_t(N * 31 + K * 7 + T));
        const CpuMatrix w = CpuMatrix::fromF32(N, K, randomFloats(size_t(N) * K, rng, 0.05f));
        const std::vector<float> x = randomFloats(size_t(T) * K, rng);
        CpuThreadPool pool(3);
        for (CpuIsa isa : supportedCpuIsas()) {
            std::vector<float> out(size_t(T) * N, NAN), pooled(size_t(T) * N, NAN);
            matmul(w, x.data(), out.data(), T, isa);
            matmul(w, x.data(), pooled.data(), T, isa, &pool);
            QVERIFY2(pooled == out, cpuIsaName(isa));
            QString why;
            QVERIFY2(checkAgainstExact(w, x, out, T, 2 * gamma(K), why), qPrintable(QString(cpuIsaName(isa)) + ": " + why));
        }
    }

    // Batch invariance, the rule behind docs/server.md "Determinism": row t of x gives the same
    // bits alone (T = 1) as among T - 1 others, for every format, path and arithmetic, pooled,
    // whatever its place in the batch (first, last, in a partial token tile).
    void everyRowComesOutAsIfAlone_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        for (const char* format : {"bf16", "f32", "int8", "int4"}) {
            QTest::addRow("%s 50x64", format) << QString(format) << 50 << 64;  // 3 full blocks and a partial one
            QTest::addRow("%s o 1024x2048", format) << QString(format) << 1024 << 2048;
        }
    }

    void everyRowComesOutAsIfAlone()
    {
        QFETCH(QString, format);
        QFETCH(int, N);
        QFETCH(int, K);
        std::mt19937 rng(uint32_t(N + K));
        const std::vector<float> values = randomFloats(size_t(N) * K, rng, 0.05f);
        std::optional<CpuMatrix> w;
        if (format == "bf16") {
            w = CpuMatrix::fromBf16(N, K, [&](int n, uint16_t* row) {
                for (int k = 0; k < K; ++k) row[k] = floatToBf16(values[size_t(n) * K + k]);
            });
        } else if (format == "f32") {
            w = CpuMatrix::fromF32(N, K, values);
        } else {
            auto q = quantizeRtn(values, N, K, format == "int8" ? 8 : 4, 32);
            QVERIFY(q.ok());
            w = format == "int8" ? CpuMatrix::fromQ8(*q) : CpuMatrix::fromQ4(*q);
        }
        constexpr int kMaxT = 70;  // past 64: a second vdpbf16ps token tile at K = 2,048
        const std::vector<float> x = randomFloats(size_t(kMaxT) * K, rng);
        CpuThreadPool pool(2);
        for (CpuIsa isa : supportedCpuIsas()) {
            for (Bf16Arithmetic arithmetic : {Bf16Arithmetic::RoundedActivations, Bf16Arithmetic::Fp32}) {
                // alone[t]: row t by itself.
                std::vector<float> alone(size_t(kMaxT) * N);
                for (int t = 0; t < kMaxT; ++t)
                    matmul(*w, &x[size_t(t) * K], &alone[size_t(t) * N], 1, isa, &pool, nullptr, arithmetic);
                for (int T : {2, 3, 4, 5, 7, 8, 9, 16, 17, 33, kMaxT}) {
                    // The last T rows, so a row sits at another index of the batch than alone.
                    const int first = kMaxT - T;
                    std::vector<float> batch(size_t(T) * N);
                    matmul(*w, &x[size_t(first) * K], batch.data(), T, isa, &pool, nullptr, arithmetic);
                    for (int t = 0; t < T; ++t)
                        QVERIFY2(std::equal(batch.begin() + ptrdiff_t(t) * N, batch.begin() + ptrdiff_t(t + 1) * N,
                                            alone.begin() + ptrdiff_t(first + t) * N),
                                 qPrintable(QString("%1 %2: row %3 of a batch of %4")
                                                .arg(cpuIsaName(isa))
                                                .arg(arithmetic == Bf16Arithmetic::Fp32 ? "fp32" : "rounded")
                                                .arg(t)
                                                .arg(T)));
                }
            }
        }
    }

    void int8ActivationQuantizerIsTheSameOnEveryPath()
    {
        std::mt19937 rng(5);
        const int blocks = 64;
        std::vector<float> x = randomFloats(size_t(blocks) * 32, rng, 2.0f);
        std::fill(x.begin(), x.begin() + 32, 0.0f);  // block 0: all zeros (d = 0)
        // Block 1: d = 1 exactly, so every x * (1 / d) is a tie: half to even, both signs.
        for (int i = 0; i < 32; ++i) x[32 + size_t(i)] = float(i % 2 ? -(i - 0.5) : i + 0.5);
        x[32] = 127.0f;
        x[64 + 5] = 1e30f;  // block 2: one huge value, the rest round to 0
        std::vector<int8_t> wantCodes(x.size());
        std::vector<float> wantScales(blocks);
        std::vector<int32_t> wantSums(blocks);
        kernels::quantizeQ8Scalar(x.data(), blocks, wantCodes.data(), wantScales.data(), wantSums.data());
        QCOMPARE(int(wantCodes[32 + 1]), -0);  // -0.5 -> -0
        QCOMPARE(int(wantCodes[32 + 2]), 2);   // 2.5 -> 2
        QCOMPARE(int(wantCodes[32 + 3]), -2);  // -2.5 -> -2
        QCOMPARE(int(wantCodes[32 + 4]), 4);   // 4.5 -> 4
        QCOMPARE(int(wantCodes[32 + 7]), -6);  // -6.5 -> -6
        QCOMPARE(int(wantCodes[64 + 5]), 127);
        QCOMPARE(wantScales[0], 0.0f);
        for (CpuIsa isa : supportedCpuIsas()) {
            if (isa == CpuIsa::Scalar) continue;
            std::vector<int8_t> codes(x.size());
            std::vector<float> scales(blocks);
            std::vector<int32_t> sums(blocks);
            if (isa == CpuIsa::Avx2)
                kernels::quantizeQ8Avx2(x.data(), blocks, codes.data(), scales.data(), sums.data());
            else kernels::quantizeQ8Avx512(x.data(), blocks, codes.data(), scales.data(), sums.data());
            QVERIFY2(codes == wantCodes, cpuIsaName(isa));
            QVERIFY2(scales == wantScales, cpuIsaName(isa));
            QVERIFY2(sums == wantSums, cpuIsaName(isa));
        }
    }

    void int8FormatTakesGroupsOfWholeActivationBlocks()
    {
        std::mt19937 rng(9);
        const std::vector<float> v = randomFloats(20 * 96, rng);
        QVERIFY(CpuMatrix::q8Supported(*quantizeRtn(v, 20, 96, 8, 32)));
        QVERIFY(!CpuMatrix::q8Supported(*quantizeRtn(v, 20, 96, 8, 48)));  // 48 is not a multiple of 32
        QVERIFY(!CpuMatrix::q8Supported(*quantizeRtn(v, 20, 96, 4, 32)));  // 4 bits: Q4
        QVERIFY(CpuMatrix::q4Supported(*quantizeRtn(v, 20, 96, 4, 32)));
        QVERIFY(!CpuMatrix::q4Supported(*quantizeRtn(v, 20, 96, 4, 48)));
        QVERIFY(!CpuMatrix::q4Supported(*quantizeRtn(v, 20, 96, 8, 32)));
    }

    void int8EveryPathMatchesTheDequantizedProduct_data()
    {
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("groupSize");
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("bits");
        for (int bits : {8, 4})
            for (int T : {1, 2, 3, 8, 9, 20}) {
                QTest::addRow("37x64 g32 T%d int%d", T, bits) << 37 << 64 << 32 << T << bits;
                QTest::addRow("20x192 g64 T%d int%d", T, bits) << 20 << 192 << 64 << T << bits;
                QTest::addRow("o 1024x2048 g128 T%d int%d", T, bits) << 1024 << 2048 << 128 << T << bits;
            }
    }

    // Every path computes the scalar reference's output bit for bit (integer dot products, the
    // same fp32 steps in the same order; cpu_gemm_q8.h), pooled or not. The reference is within
    // the activation quantization's bound of the exact product of the dequantized weights:
    // each x_k moves by at most d_b / 2 (+ 2^-22 |x_k| for the rounding of x * (1/d)), and the
    // fp32 steps add at most 4 gamma_K sum_k (q_k + z) s (|x_k| + d_b).
    void int8EveryPathMatchesTheDequantizedProduct()
    {
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(int, groupSize);
        QFETCH(int, T);
        QFETCH(int, bits);
        std::mt19937 rng(uint32_t(N + K + groupSize + T));
        auto q = quantizeRtn(randomFloats(size_t(N) * K, rng, 0.05f), N, K, bits, groupSize);
        QVERIFY2(q.ok(), q.ok() ? "" : q.error().c_str());
        const CpuMatrix w = bits == 8 ? CpuMatrix::fromQ8(*q) : CpuMatrix::fromQ4(*q);
        QCOMPARE(w.format(), bits == 8 ? MatrixFormat::Q8 : MatrixFormat::Q4);
        // Every code survives the layout (Q4: two to a byte).
        for (int n = 0; n < N; n += 7)
            for (int k = 0; k < K; ++k)
                QCOMPARE(w.at(n, k), float(q->code(n, k)) * q->scales[size_t(n) * q->groupsPerRow() + k / groupSize] -
                                         q->scales[size_t(n) * q->groupsPerRow() + k / groupSize] *
                                             float(q->zeros[size_t(n) * q->groupsPerRow() + k / groupSize]));
        const std::vector<float> x = randomFloats(size_t(T) * K, rng);
        std::vector<float> want(size_t(T) * N, NAN);
        matmul(w, x.data(), want.data(), T, CpuIsa::Scalar);
        CpuThreadPool pool(3);
        for (CpuIsa isa : supportedCpuIsas()) {
            std::vector<float> out(size_t(T) * N, NAN), pooled(size_t(T) * N, NAN);
            matmul(w, x.data(), out.data(), T, isa);
            matmul(w, x.data(), pooled.data(), T, isa, &pool);
            QVERIFY2(out == want, cpuIsaName(isa));
            QVERIFY2(pooled == want, cpuIsaName(isa));
        }
        for (int t = 0; t < T; ++t) {
            std::vector<double> d(size_t(K / 32));
            for (int k = 0; k < K; ++k)
                d[size_t(k / 32)] = std::max(d[size_t(k / 32)], std::abs(double(x[size_t(t) * K + k])) / 127.0);
            for (int n = 0; n < N; ++n) {
                double exact = 0.0, bound = 1e-30;
                for (int k = 0; k < K; ++k) {
                    const int g = k / groupSize;
                    const double s = q->scales[size_t(n) * q->groupsPerRow() + g];
                    const double z = q->zeros[size_t(n) * q->groupsPerRow() + g];
                    const double xk = x[size_t(t) * K + k], db = d[size_t(k / 32)];
                    const double wk = (double(q->code(n, k)) - z) * s;
                    exact += xk * wk;
                    bound += std::abs(wk) * (db * (0.5 + 0x1p-20) + 0x1p-22 * std::abs(xk)) +
                             4 * gamma(K) * (double(q->code(n, k)) + z) * s * (std::abs(xk) + db);
                }
                const double got = want[size_t(t) * N + n];
                QVERIFY2(std::abs(got - exact) <= bound, qPrintable(QString("t %1 n %2: got %3, exact %4, bound %5")
                                                                        .arg(t)
                                                                        .arg(n)
                                                                        .arg(got, 0, 'g', 9)
                                                                        .arg(exact, 0, 'g', 9)
                                                                        .arg(bound, 0, 'g', 3)));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestCpuGemm)
#include "test_cpu_gemm.moc"
