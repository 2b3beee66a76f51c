// The fused GEMM (fused_gemm.h) against cpu::linear: plain stores and fp32 residual adds at each
// row-tile size (32, 64, 128, two 128-row tiles), the SiLU*up epilogue against cpu::linear ->
// (rounded) -> cpu::siluMul, with K split over clusters and without (threadBlockClusters off),
// bf16 and fp16. Rows past M hold NaNs in x and a sentinel in out: nothing may reach or touch
// them. The split sums are added in rank order, so two launches agree bit for bit.
// The RoPE + cache-write epilogue is tested with the skinny kernel's in test_gemm.cpp.
// Tolerance as test_gemm.cpp: 1e-2 of the output's max magnitude (1.5e-2 where an intermediate
// is rounded to the element type, as the unfused kernels round it).
#include "cuda_test_support.h"

#include "cuda/fused_gemm.h"
#include "engine/cpu/cpu_ops.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace brook;
using namespace brook::cuda;
using namespace brook::cudatest;

class TestFusedGemm : public QObject {
    Q_OBJECT
private slots:
    void matchesCpu_data()
    {
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("epilogue");
        QTest::addColumn<bool>("bf16");
        QTest::addColumn<bool>("clusters");
        const int store = int(FusedEpilogue::Store), add = int(FusedEpilogue::AddToFloat),
                  silu = int(FusedEpilogue::SiluMul);
        for (bool clusters : {true, false}) {
            const char* how = clusters ? "split" : "unsplit";
            QTest::addRow("%s qkv M5 store", how) << 5 << 2560 << 1024 << store << true << clusters;
            QTest::addRow("%s qkv M17 store fp16", how) << 17 << 2560 << 1024 << store << false << clusters;
            QTest::addRow("%s o M48 +=fp32", how) << 48 << 1024 << 2048 << add << true << clusters;
            QTest::addRow("%s down M83 +=fp32", how) << 83 << 1024 << 3072 << add << true << clusters;
            QTest::addRow("%s down M256 +=fp32 fp16", how) << 256 << 1024 << 3072 << add << false << clusters;
            QTest::addRow("%s gateup M83 silu", how) << 83 << 6144 << 1024 << silu << true << clusters;
            QTest::addRow("%s gateup M200 silu fp16", how) << 200 << 6144 << 1024 << silu << false << clusters;
            QTest::addRow("%s narrow M129 store", how) << 129 << 64 << 128 << store << true << clusters;
        }
    }
    void matchesCpu()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, M);
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(int, epilogue);
        QFETCH(bool, bf16);
        QFETCH(bool, clusters);
        CudaFeatures features;
        features.threadBlockClusters = clusters;
        const FeaturesScope scope(features);
        bf16 ? run<__nv_bfloat16>(M, N, K, FusedEpilogue(epilogue), ElementType::BF16)
             : run<__half>(M, N, K, FusedEpilogue(epilogue), ElementType::F16);
    }

    void rejectsUnsupportedShapes()
    {
        QVERIFY(fused_gemm_supported(256, 1024, 3072));
        QVERIFY(!fused_gemm_supported(257, 1024, 3072));
        QVERIFY(!fused_gemm_supported(0, 1024, 3072));
        QVERIFY(!fused_gemm_supported(16, 1000, 1024));
        QVERIFY(!fused_gemm_supported(16, 1024, 1000));
        BROOK_REQUIRE_GPU();
        DeviceBuffer buffer(1 << 20);
        bool threw = false;
        try {
            launch_fused_gemm(buffer.get(), buffer.get(), buffer.get(), 300, 64, 64, ElementType::BF16,
                              FusedEpilogue::Store, nullptr);
        } catch (const CudaError&) {
            threw = true;
        }
        QVERIFY(threw);
        threw = false;
        try {  // RopeCache without its targets
            launch_fused_gemm(buffer.get(), buffer.get(), nullptr, 16, 2560, 1024, ElementType::BF16,
                              FusedEpilogue::RopeCache, nullptr, nullptr);
        } catch (const CudaError&) {
            threw = true;
        }
        QVERIFY(threw);
    }

private:
    template <typename E>
    void run(int M, int N, int K, FusedEpilogue epilogue, ElementType type)
    {
        const bool silu = epilogue == FusedEpilogue::SiluMul, addsToFloat = epilogue == FusedEpilogue::AddToFloat;
        const int outCols = silu ? N / 2 : N;
        const int rows = M + 16;  // 16 rows past M: NaN in x, a sentinel in out
        auto x = toDevice<E>(randomFloats(size_t(M) * K, 100 + M));
        auto w = toDevice<E>(randomFloats(size_t(N) * K, 200 + N, 1.0f / 32));
        std::vector<E> xPadded(size_t(rows) * K, cuda::fromFloat<E>(std::numeric_limits<float>::quiet_NaN()));
        std::copy(x.begin(), x.end(), xPadded.begin());
        const std::vector<float> start = randomFloats(size_t(rows) * outCols, 300);
        auto dx = upload(xPadded), dw = upload(w);
        DeviceBuffer out(size_t(rows) * outCols * (addsToFloat ? 4 : 2));
        std::vector<E> startTyped = toDevice<E>(start);
        if (addsToFloat)
            BROOK_CUDA_CHECK(cudaMemcpy(out.get(), start.data(), start.size() * 4, cudaMemcpyHostToDevice));
        else BROOK_CUDA_CHECK(cudaMemcpy(out.get(), startTyped.data(), startTyped.size() * 2, cudaMemcpyHostToDevice));

        auto result = [&] {
            return addsToFloat ? download<float>(out, size_t(rows) * outCols)
                               : toHostFloat(download<E>(out, size_t(rows) * outCols));
        };
        launch_fused_gemm(dx.get(), dw.get(), out.get(), M, N, K, type, epilogue, nullptr);
        const std::vector<float> all = result();
        std::vector<float> got(all.begin(), all.begin() + ptrdiff_t(M) * outCols);

        std::vector<float> product(size_t(M) * N);
        cpu::linear(toHostFloat(x).data(), toHostFloat(w).data(), product.data(), M, K, N);
        std::vector<float> want(size_t(M) * outCols);
        double tolerance = 1e-2;
        if (silu) {
            // Gate and up rounded to the element type, as a GEMM's output would be; then SiLU*up.
            product = toHostFloat(toDevice<E>(product));
            cpu::siluMul(product.data(), want.data(), M, N / 2);
            tolerance = 1.5e-2;
        } else {
            want = product;
        }
        const std::vector<float> base = addsToFloat ? start : toHostFloat(startTyped);
        if (addsToFloat)
            for (size_t i = 0; i < want.size(); ++i) want[i] += base[i];
        const double err = relativeError(got, want);
        QVERIFY2(err < tolerance, qPrintable(QString("relative error %1").arg(err)));
        for (size_t i = size_t(M) * outCols; i < all.size(); ++i)
            if (std::memcmp(&all[i], &base[i], sizeof(float)) != 0)
                QFAIL(qPrintable(QString("row %1 past M was written").arg(i / size_t(outCols))));

        // A second launch on the same inputs: bit for bit the same (overwriting epilogues; the
        // residual add would add twice).
        if (!addsToFloat) {
            launch_fused_gemm(dx.get(), dw.get(), out.get(), M, N, K, type, epilogue, nullptr);
            const std::vector<float> again = result();
            QVERIFY(std::memcmp(again.data(), all.data(), all.size() * sizeof(float)) == 0);
        }
    }
};

QTEST_APPLESS_MAIN(TestFusedGemm)
#include "test_fused_gemm.moc"
