// Element-wise layer kernels against their CPU references (src/engine/cpu/cpu_ops.h) on random
// inputs at a small shape and at ERNIE-0.3B's (H 1024, NH 16, KVH 2, HD 128, I 3072).
// Tolerances: embedding exact; the rest <= 1e-2 relative to the output's max magnitude (one
// bf16 rounding of the output is 2^-8 = 3.9e-3 relative; fp16's is 2^-11).
#include "cuda_test_support.h"

#include "cuda/layer_kernels.h"
#include "engine/cpu/cpu_ops.h"

#include <cmath>

using namespace brook;
using namespace brook::cuda;
using namespace brook::cudatest;

class TestLayerKernels : public QObject {
    Q_OBJECT
private slots:
    void embedding()
    {
        BROOK_REQUIRE_GPU();
        const int V = 1000, H = 1024, T = 37;
        auto table = toDevice<__nv_bfloat16>(randomFloats(size_t(V) * H, 1));
        std::vector<int32_t> ids(T);
        std::mt19937 rng(2);
        for (auto& id : ids) id = int32_t(rng() % V);
        auto dTable = upload(table), dIds = upload(ids);
        DeviceBuffer residual(size_t(T) * H * sizeof(float));
        launch_embedding(dIds.as<int32_t>(), dTable.get(), residual.as<float>(), T, H, ElementType::BF16, nullptr);
        auto got = download<float>(residual, size_t(T) * H);
        for (int t = 0; t < T; ++t)
            for (int i = 0; i < H; ++i) QCOMPARE(got[size_t(t) * H + i], toFloat(table[size_t(ids[t]) * H + i]));
    }

    void addRmsnorm_data()
    {
        QTest::addColumn<int>("H");
        QTest::addColumn<bool>("bf16");
        QTest::addColumn<bool>("withDelta");
        QTest::newRow("ernie bf16 +delta") << 1024 << true << true;
        QTest::newRow("ernie fp16") << 1024 << false << false;
        QTest::newRow("small bf16 +delta") << 64 << true << true;
    }
    void addRmsnorm()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, H);
        QFETCH(bool, bf16);
        QFETCH(bool, withDelta);
        bf16 ? check<__nv_bfloat16>(H, withDelta, ElementType::BF16) : check<__half>(H, withDelta, ElementType::F16);
    }

    void ropeCacheWrite_data()
    {
        QTest::addColumn<int>("NH");
        QTest::addColumn<int>("KVH");
        QTest::addColumn<int>("HD");
        QTest::newRow("ernie") << 16 << 2 << 128;
        QTest::newRow("small") << 4 << 2 << 16;
    }
    void ropeCacheWrite()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, NH);
        QFETCH(int, KVH);
        QFETCH(int, HD);
        const int T = 29, blockSize = 16, numBlocks = 40, qDim = NH * HD, kvDim = KVH * HD, row = qDim + 2 * kvDim;
        const double theta = 500000.0;
        auto qkv = toDevice<__nv_bfloat16>(randomFloats(size_t(T) * row, 3));
        const std::vector<float> qkvF = toHostFloat(qkv);
        std::vector<int32_t> positions(T), slotMap(T);
        std::mt19937 rng(4);
        for (int t = 0; t < T; ++t) {
            positions[t] = t < 5 ? t : int32_t(rng() % 131072);          // small and very large positions
            slotMap[t] = t == 3 ? -1 : t * 7 % (numBlocks * blockSize);  // one padding row
        }
        std::vector<float> invFreq(size_t(HD / 2));
        for (int i = 0; i < HD / 2; ++i) invFreq[size_t(i)] = float(1.0 / std::pow(theta, double(2 * i) / HD));
        auto dQkv = upload(qkv), dPos = upload(positions), dSlots = upload(slotMap), dInv = upload(invFreq);
        DeviceBuffer q(size_t(T) * qDim * 2), k(size_t(numBlocks) * blockSize * kvDim * 2),
            v(size_t(numBlocks) * blockSize * kvDim * 2);
        BROOK_CUDA_CHECK(cudaMemset(k.get(), 0, k.bytes()));
        BROOK_CUDA_CHECK(cudaMemset(v.get(), 0, v.bytes()));
        launch_rope_cache_write(dQkv.get(), q.get(), k.get(), v.get(), dPos.as<int32_t>(), dSlots.as<int32_t>(),
                                dInv.as<float>(), T, NH, KVH, HD, blockSize, ElementType::BF16, nullptr);
        const auto gotQ = toHostFloat(download<__nv_bfloat16>(q, size_t(T) * qDim));
        const auto gotK = toHostFloat(download<__nv_bfloat16>(k, size_t(numBlocks) * blockSize * kvDim));
        const auto gotV = toHostFloat(download<__nv_bfloat16>(v, size_t(numBlocks) * blockSize * kvDim));
        std::vector<float> wantQ(size_t(T) * qDim), gotKRows, wantKRows, gotVRows, wantVRows;
        for (int t = 0; t < T; ++t) {
            const float* src = &qkvF[size_t(t) * row];
            std::copy(src, src + qDim, &wantQ[size_t(t) * qDim]);
            for (int h = 0; h < NH; ++h)
                cpu::ropeInterleaved(&wantQ[size_t(t) * qDim + h * HD], HD, positions[t], theta);
            if (slotMap[t] < 0) continue;
            std::vector<float> kRow(src + qDim, src + qDim + kvDim);
            for (int h = 0; h < KVH; ++h) cpu::ropeInterleaved(&kRow[size_t(h) * HD], HD, positions[t], theta);
            wantKRows.insert(wantKRows.end(), kRow.begin(), kRow.end());
            wantVRows.insert(wantVRows.end(), src + qDim + kvDim, src + row);
            gotKRows.insert(gotKRows.end(), &gotK[size_t(slotMap[t]) * kvDim],
                            &gotK[size_t(slotMap[t]) * kvDim] + kvDim);
            gotVRows.insert(gotVRows.end(), &gotV[size_t(slotMap[t]) * kvDim],
                            &gotV[size_t(slotMap[t]) * kvDim] + kvDim);
        }
        QVERIFY2(relativeError(gotQ, wantQ) < 1e-2, qPrintable(QString::number(relativeError(gotQ, wantQ))));
        QVERIFY(relativeError(gotKRows, wantKRows) < 1e-2);
        QCOMPARE(gotVRows, wantVRows);  // v is copied, not rotated
        // The padding row (slot -1) wrote nothing: slot 21 = 3 * 7 stays zero.
        for (int i = 0; i < kvDim; ++i) QCOMPARE(gotK[size_t(21) * kvDim + i], 0.0f);
    }

    void siluMul()
    {
        BROOK_REQUIRE_GPU();
        const int T = 13, I = 3072;
        auto gateUp = toDevice<__nv_bfloat16>(randomFloats(size_t(T) * 2 * I, 5, 2.0f));
        auto d = upload(gateUp);
        DeviceBuffer out(size_t(T) * I * 2);
        launch_silu_mul(d.get(), out.get(), T, I, ElementType::BF16, nullptr);
        const auto got = toHostFloat(download<__nv_bfloat16>(out, size_t(T) * I));
        std::vector<float> want(size_t(T) * I);
        cpu::siluMul(toHostFloat(gateUp).data(), want.data(), T, I);
        QVERIFY(relativeError(got, want) < 1e-2);
    }

private:
    template <typename E>
    void check(int H, bool withDelta, ElementType type)
    {
        const int T = 21, rows = 7;
        const float eps = 1e-5f;
        const std::vector<float> residual = randomFloats(size_t(T) * H, 6, 3.0f);
        auto delta = toDevice<E>(randomFloats(size_t(T) * H, 7));
        std::vector<float> weightF = randomFloats(size_t(H), 8, 0.5f);
        for (auto& w : weightF) w += 1.0f;
        auto weight = toDevice<E>(weightF);
        std::vector<int32_t> rowIndex = {20, 0, 5, 6, 13, 2, 19};
        auto dRes = upload(residual), dDelta = upload(delta), dWeight = upload(weight), dRows = upload(rowIndex);
        DeviceBuffer out(size_t(rows) * H * sizeof(E));
        launch_add_rmsnorm(dRes.as<float>(), withDelta ? dDelta.get() : nullptr, dWeight.get(), out.get(),
                           dRows.as<int32_t>(), rows, H, eps, type, nullptr);
        const auto got = toHostFloat(download<E>(out, size_t(rows) * H));
        const auto gotResidual = download<float>(dRes, size_t(T) * H);
        std::vector<float> x = residual;
        const auto deltaF = toHostFloat(delta);
        const auto weightR = toHostFloat(weight);
        std::vector<float> want(size_t(rows) * H);
        for (int r = 0; r < rows; ++r) {
            float* xr = &x[size_t(rowIndex[r]) * H];
            if (withDelta)
                for (int i = 0; i < H; ++i) xr[i] += deltaF[size_t(rowIndex[r]) * H + i];
            cpu::rmsnorm(xr, weightR.data(), &want[size_t(r) * H], 1, H, eps);
        }
        QVERIFY2(relativeError(got, want) < 1e-2, qPrintable(QString::number(relativeError(got, want))));
        QVERIFY(relativeError(gotResidual, x) < 1e-6);  // the residual was updated in place
    }
};

QTEST_APPLESS_MAIN(TestLayerKernels)
#include "test_layer_kernels.moc"
