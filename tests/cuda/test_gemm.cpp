// GEMMs against cpu::linear on random inputs: the skinny decode kernel (M <= 8) and cuBLASLt
// (any M), bf16 and fp16 inputs, element-type or fp32 output, overwrite or accumulate.
// Tolerance: 1e-2 relative to the output's max magnitude (bf16 output rounding is 3.9e-3;
// fp32 accumulation over K <= 3072 adds far less). With row padding (the backend's setting) the
// rows past M hold NaNs, which must not reach the M rows checked.
#include "cuda_test_support.h"

#include "cuda/cublaslt_gemm.h"
#include "cuda/fused_gemm.h"
#include "cuda/skinny_gemm.h"
#include "engine/cpu/cpu_ops.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <tuple>

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
        // Row padding (the backend's setting): M runs as paddedRows(M) rows; buffers hold them.
        QTest::addRow("padded M77 +=fp32 (to 128)") << -77 << 1024 << 3072 << false << true << true << true;
        QTest::addRow("padded M300 (to 320)") << -300 << 2560 << 1024 << false << false << false << true;
        QTest::addRow("padded M1030 (to 1280)") << -1030 << 6144 << 1024 << false << false << false << true;
        QTest::addRow("padded M17 head fp32 (to 32)") << -17 << 103424 << 1024 << false << true << false << true;
    }

    void paddedRowsAreBuckets()
    {
        QCOMPARE(CublasLtGemm::paddedRows(5), 16);
        QCOMPARE(CublasLtGemm::paddedRows(64), 64);
        QCOMPARE(CublasLtGemm::paddedRows(65), 128);
        QCOMPARE(CublasLtGemm::paddedRows(1024), 1024);
        QCOMPARE(CublasLtGemm::paddedRows(1025), 1280);
        QCOMPARE(CublasLtGemm::paddedRows(8192), 8192);
        for (int m = 1; m <= 9000; ++m) {
            const int p = CublasLtGemm::paddedRows(m);
            QVERIFY(p >= m && p - m < 256);
        }
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
        const bool pad = M < 0;  // rows given negative: run with row padding
        M = std::abs(M);
        bf16 ? run<__nv_bfloat16>(M, N, K, skinny, outFloat, accumulate, ElementType::BF16, pad)
             : run<__half>(M, N, K, skinny, outFloat, accumulate, ElementType::F16, pad);
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

    // The qkv GEMM with the RoPE + cache-write epilogue against cpu::rmsnorm -> cpu::linear ->
    // (rounded to bf16) -> cpu::ropeInterleaved, at ERNIE's shape, positions up to 100k, one
    // padding row (slot -1) that must write no cache entry. Both kernels that have it: the
    // skinny one (its RmsNorm prologue reads the residual) and the fused GEMM (fused_gemm.h,
    // which reads the normed rows).
    void ropeEpilogue_data()
    {
        QTest::addColumn<int>("M");
        QTest::addColumn<bool>("fusedTiles");
        QTest::newRow("skinny M1") << 1 << false;
        QTest::newRow("skinny M5") << 5 << false;
        QTest::newRow("fused M17") << 17 << true;
        QTest::newRow("fused M83") << 83 << true;
        QTest::newRow("fused M200") << 200 << true;
    }
    void ropeEpilogue()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, M);
        QFETCH(bool, fusedTiles);
        // 256 cache slots: rows map to distinct ones (37 is prime to 256).
        const int H = 1024, NH = 16, KVH = 2, HD = 128, N = (NH + 2 * KVH) * HD, blockSize = 16, blocks = 16;
        const int qDim = NH * HD, kvDim = KVH * HD;
        const double theta = 500000.0;
        const float eps = 1e-6f;
        auto w = toDevice<__nv_bfloat16>(randomFloats(size_t(N) * H, 500, 1.0f / 32));
        const std::vector<float> residual = randomFloats(size_t(M) * H, 501, 2.0f);
        std::vector<float> nw = randomFloats(size_t(H), 502, 0.3f);
        for (auto& v : nw) v += 1.0f;
        auto nwDevice = toDevice<__nv_bfloat16>(nw);
        std::vector<int32_t> positions(static_cast<size_t>(M)), slotIds(static_cast<size_t>(M));
        for (int m = 0; m < M; ++m) {
            positions[size_t(m)] = m == 0 ? 100003 : 17 * m + 3;
            slotIds[size_t(m)] = m == M - 1 && M > 1 ? -1 : (m * 37 + 5) % (blocks * blockSize);
        }
        std::vector<float> invFreq(size_t(HD / 2));
        for (int i = 0; i < HD / 2; ++i) invFreq[size_t(i)] = float(1.0 / std::pow(theta, double(2 * i) / HD));

        const std::vector<float> sentinel = randomFloats(size_t(blocks) * blockSize * kvDim, 503);
        auto cacheInit = toDevice<__nv_bfloat16>(sentinel);
        auto dw = upload(w), dres = upload(residual), dnw = upload(nwDevice), dpos = upload(positions),
             dslots = upload(slotIds), dfreq = upload(invFreq), kCache = upload(cacheInit), vCache = upload(cacheInit);
        DeviceBuffer q(size_t(M) * qDim * 2);
        SkinnyRope rope;
        rope.q = q.get();
        rope.kCache = kCache.get();
        rope.vCache = vCache.get();
        rope.positions = dpos.as<int32_t>();
        rope.slotMapping = dslots.as<int32_t>();
        rope.invFreq = dfreq.as<float>();
        rope.numHeads = NH;
        rope.numKvHeads = KVH;
        rope.headDim = HD;
        std::vector<float> normed(size_t(M) * H), qkv(size_t(M) * N);
        cpu::rmsnorm(residual.data(), toHostFloat(nwDevice).data(), normed.data(), M, H, eps);
        normed = toHostFloat(toDevice<__nv_bfloat16>(normed));
        if (fusedTiles) {
            auto dnormed = upload(toDevice<__nv_bfloat16>(normed));
            launch_fused_gemm(dnormed.get(), dw.get(), nullptr, M, N, H, ElementType::BF16, FusedEpilogue::RopeCache,
                              nullptr, &rope);
        } else {
            launch_skinny_gemm(dres.get(), dw.get(), nullptr, M, N, H, ElementType::BF16, false, false, nullptr,
                               SkinnyPrologue::RmsNorm, dnw.get(), eps, &rope);
        }
        cpu::linear(normed.data(), toHostFloat(w).data(), qkv.data(), M, H, N);
        qkv = toHostFloat(toDevice<__nv_bfloat16>(qkv));
        std::vector<float> wantQ(size_t(M) * qDim), wantK = toHostFloat(cacheInit), wantV = wantK;
        for (int m = 0; m < M; ++m) {
            float* row = qkv.data() + size_t(m) * N;
            for (int h = 0; h < NH + KVH; ++h) cpu::ropeInterleaved(row + h * HD, HD, positions[size_t(m)], theta);
            std::copy(row, row + qDim, wantQ.begin() + size_t(m) * qDim);
            if (slotIds[size_t(m)] < 0) continue;
            std::copy(row + qDim, row + qDim + kvDim, wantK.begin() + size_t(slotIds[size_t(m)]) * kvDim);
            std::copy(row + qDim + kvDim, row + N, wantV.begin() + size_t(slotIds[size_t(m)]) * kvDim);
        }
        const auto gotQ = toHostFloat(download<__nv_bfloat16>(q, wantQ.size()));
        const auto gotK = toHostFloat(download<__nv_bfloat16>(kCache, wantK.size()));
        const auto gotV = toHostFloat(download<__nv_bfloat16>(vCache, wantV.size()));
        // bf16 rounding of the GEMM output before the rotation can flip one ulp against the
        // fp32 reference accumulation order: 1.5e-2 of the max, as the prologue test.
        for (const auto& [got, want, what] : {std::tuple(&gotQ, &wantQ, "q"), std::tuple(&gotK, &wantK, "k cache"),
                                              std::tuple(&gotV, &wantV, "v cache")}) {
            const double err = relativeError(*got, *want);
            QVERIFY2(err < 1.5e-2, qPrintable(QString("%1: relative error %2").arg(what).arg(err)));
        }
        // The padding row's slot is untouched: every cache entry outside the written slots
        // still holds the sentinel exactly.
        std::vector<bool> written(size_t(blocks) * blockSize, false);
        for (int m = 0; m < M; ++m)
            if (slotIds[size_t(m)] >= 0) written[size_t(slotIds[size_t(m)])] = true;
        const auto init = toHostFloat(cacheInit);
        for (size_t slot = 0; slot < written.size(); ++slot)
            if (!written[slot])
                for (int i = 0; i < kvDim; ++i)
                    QCOMPARE(gotK[slot * kvDim + size_t(i)], init[slot * kvDim + size_t(i)]);
    }

private:
    template <typename E>
    void run(int M, int N, int K, bool skinny, bool outFloat, bool accumulate, ElementType type, bool pad = false)
    {
        auto x = toDevice<E>(randomFloats(size_t(M) * K, 100 + M));
        auto w = toDevice<E>(randomFloats(size_t(N) * K, 200 + N, 1.0f / 32));
        const std::vector<float> start = randomFloats(size_t(M) * N, 300);
        const size_t rows = pad ? size_t(CublasLtGemm::paddedRows(M)) : size_t(M);
        // Padded rows of x hold NaNs: whatever they compute must stay in the padded rows of out.
        std::vector<E> xPadded(rows * K, cuda::fromFloat<E>(std::numeric_limits<float>::quiet_NaN()));
        std::copy(x.begin(), x.end(), xPadded.begin());
        auto dx = upload(xPadded), dw = upload(w);
        DeviceBuffer out(rows * N * (outFloat ? 4 : 2));
        if (outFloat) BROOK_CUDA_CHECK(cudaMemcpy(out.get(), start.data(), start.size() * 4, cudaMemcpyHostToDevice));
        else {
            auto s = toDevice<E>(start);
            BROOK_CUDA_CHECK(cudaMemcpy(out.get(), s.data(), s.size() * 2, cudaMemcpyHostToDevice));
        }
        CublasLtGemm gemm;
        gemm.setUseSkinny(skinny);
        gemm.setPadRows(pad);
        gemm.matmul(dx.get(), dw.get(), out.get(), M, N, K, type, outFloat, nullptr, accumulate ? 1.0f : 0.0f);
        std::vector<float> got =
            outFloat ? download<float>(out, size_t(M) * N) : toHostFloat(download<E>(out, size_t(M) * N));
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
