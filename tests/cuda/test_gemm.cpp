// GEMMs against cpu::linear on random inputs: the skinny decode kernel (M <= 8) and cuBLASLt
// (any M), bf16 and fp16 inputs, element-type or fp32 output, overwrite or accumulate.
// Tolerance: 1e-2 relative to the output's max magnitude (bf16 output rounding is 3.9e-3;
// fp32 accumulation over K <= 3072 adds far less).
#include "cuda_test_support.h"

#include "cuda/cublaslt_gemm.h"
#include "cuda/skinny_gemm.h"
#include "engine/cpu/cpu_ops.h"

using namespace brook;
using namespace brook::cuda;
using namespace brook::cudatest;

class TestGemm : public QObject {
    Q_OBJECT
private slots:
    void matchesCpu_data()
    {
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<bool>("skinny");
        QTest::addColumn<bool>("outFloat");
        QTest::addColumn<bool>("accumulate");
        QTest::addColumn<bool>("bf16");
        for (bool skinny : {true, false}) {
            const char* path = skinny ? "skinny" : "cublaslt";
            QTest::addRow("%s qkv M1", path) << 1 << 2560 << 1024 << skinny << false << false << true;
            QTest::addRow("%s o M3 +=fp32", path) << 3 << 1024 << 2048 << skinny << true << true << true;
            QTest::addRow("%s down M8 +=fp32", path) << 8 << 1024 << 3072 << skinny << true << true << true;
            QTest::addRow("%s gateup M5 fp16", path) << 5 << 6144 << 1024 << skinny << false << false << false;
            QTest::addRow("%s head M2 fp32", path) << 2 << 103424 << 1024 << skinny << true << false << true;
            QTest::addRow("%s odd N M7", path) << 7 << 1001 << 64 << skinny << false << false << true;
        }
        QTest::addRow("cublaslt prefill M300") << 300 << 2560 << 1024 << false << false << false << true;
        QTest::addRow("cublaslt prefill M77 +=fp32") << 77 << 1024 << 3072 << false << true << true << false;
    }

    void matchesCpu()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, M);
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(bool, skinny);
        QFETCH(bool, outFloat);
        QFETCH(bool, accumulate);
        QFETCH(bool, bf16);
        bf16 ? run<__nv_bfloat16>(M, N, K, skinny, outFloat, accumulate, ElementType::BF16)
             : run<__half>(M, N, K, skinny, outFloat, accumulate, ElementType::F16);
    }

    // The fused prologues against the standalone references: rmsnorm of fp32 residual rows, and
    // SiLU(gate) * up, each rounded to the element type before the GEMM as the kernels round.
    void prologues_data()
    {
        QTest::addColumn<int>("M");
        QTest::addColumn<bool>("norm");
        QTest::newRow("rmsnorm M1 (qkv)") << 1 << true;
        QTest::newRow("rmsnorm M8 (gate-up)") << 8 << true;
        QTest::newRow("silu M1 (down)") << 1 << false;
        QTest::newRow("silu M6 (down)") << 6 << false;
    }
    void prologues()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, M);
        QFETCH(bool, norm);
        const int K = norm ? 1024 : 3072, N = norm ? 2560 : 1024;
        const float eps = 1e-5f;
        auto w = toDevice<__nv_bfloat16>(randomFloats(size_t(N) * K, 400, 1.0f / 32));
        auto dw = upload(w);
        std::vector<float> fx(size_t(M) * K);  // the prologue's output, as the GEMM sees it
        DeviceBuffer input, weight;
        if (norm) {
            const std::vector<float> residual = randomFloats(size_t(M) * K, 401, 2.0f);
            std::vector<float> nw = randomFloats(size_t(K), 402, 0.3f);
            for (auto& v : nw) v += 1.0f;
            auto nwDevice = toDevice<__nv_bfloat16>(nw);
            input = upload(residual);
            weight = upload(nwDevice);
            cpu::rmsnorm(residual.data(), toHostFloat(nwDevice).data(), fx.data(), M, K, eps);
        } else {
            auto gateUp = toDevice<__nv_bfloat16>(randomFloats(size_t(M) * 2 * K, 403, 2.0f));
            input = upload(gateUp);
            cpu::siluMul(toHostFloat(gateUp).data(), fx.data(), M, K);
        }
        fx = toHostFloat(toDevice<__nv_bfloat16>(fx));  // rounded like the kernel's shared-memory rows
        DeviceBuffer out(size_t(M) * N * 2);
        launch_skinny_gemm(input.get(), dw.get(), out.get(), M, N, K, ElementType::BF16, false, false, nullptr,
                           norm ? SkinnyPrologue::RmsNorm : SkinnyPrologue::SiluMul, weight.get(), eps);
        const auto got = toHostFloat(download<__nv_bfloat16>(out, size_t(M) * N));
        std::vector<float> want(size_t(M) * N);
        cpu::linear(fx.data(), toHostFloat(w).data(), want.data(), M, K, N);
        const double err = relativeError(got, want);
        QVERIFY2(err < 1.5e-2, qPrintable(QString("relative error %1").arg(err)));
    }

private:
    template <typename E>
    void run(int M, int N, int K, bool skinny, bool outFloat, bool accumulate, ElementType type)
    {
        auto x = toDevice<E>(randomFloats(size_t(M) * K, 100 + M));
        auto w = toDevice<E>(randomFloats(size_t(N) * K, 200 + N, 1.0f / 32));
        const std::vector<float> start = randomFloats(size_t(M) * N, 300);
        auto dx = upload(x), dw = upload(w);
        DeviceBuffer out(size_t(M) * N * (outFloat ? 4 : 2));
        if (outFloat) BROOK_CUDA_CHECK(cudaMemcpy(out.get(), start.data(), start.size() * 4, cudaMemcpyHostToDevice));
        else {
            auto s = toDevice<E>(start);
            BROOK_CUDA_CHECK(cudaMemcpy(out.get(), s.data(), s.size() * 2, cudaMemcpyHostToDevice));
        }
        CublasLtGemm gemm;
        gemm.setUseSkinny(skinny);
        gemm.matmul(dx.get(), dw.get(), out.get(), M, N, K, type, outFloat, nullptr, accumulate ? 1.0f : 0.0f);
        std::vector<float> got = outFloat ? download<float>(out, size_t(M) * N) : toHostFloat(download<E>(out, size_t(M) * N));
        std::vector<float> want(size_t(M) * N);
        cpu::linear(toHostFloat(x).data(), toHostFloat(w).data(), want.data(), M, K, N);
        if (accumulate) {
            const std::vector<float> base = outFloat ? start : toHostFloat(toDevice<E>(start));
            for (size_t i = 0; i < want.size(); ++i) want[i] += base[i];
        }
        const double err = relativeError(got, want);
        QVERIFY2(err < 1e-2, qPrintable(QString("relative error %1").arg(err)));
    }
};

QTEST_APPLESS_MAIN(TestGemm)
#include "test_gemm.moc"
