// The 4-/8-bit matmuls against cpu::linear on weights dequantized by this file's own reading of
// the layout documented in engine/quantized_weight.h (an independent reference: the test has its
// own round-to-nearest quantizer too). Random normal weights and inputs, all four ERNIE shapes,
// odd M, N not a multiple of the tile, group sizes 32/64/96/128, bf16 and fp16, element-type or
// fp32 output, overwrite or accumulate, the decode prologues; plus the upload layout.
// Tolerances, relative to the output's max magnitude (cudatest::relativeError's measure):
//   gemv, fp32 out, no prologue: 1e-4. The kernel dequantizes exactly ((q - z) * s is exact in
//     fp32 for 8-bit codes and fp16 scales) and sees the same rounded x; only the fp32 summation
//     order differs (~1e-6 at K = 4096), so a wrong code, group or row shows at once.
//   gemv, element-type out: 1e-2 (bf16 output rounding alone is up to 2^-9 = 2e-3 of a value).
//   gemv prologues: 1.5e-2, as tests/cuda/test_gemm.cpp: the kernel's rsqrtf/__expf may round an
//     f(x) value to the neighbouring bf16 value where the CPU reference does not.
//   gemm: 1e-2. Weights are rounded to the element type for the MMA: a random 2^-9 relative error
//     per weight, ~2e-3 of the max output over K <= 3072, plus the output rounding.
#include "cuda_test_support.h"

#include "cuda/quant_matmul.h"
#include "engine/cpu/cpu_ops.h"
#include "engine/quantized_weight.h"
#include "engine/tensor_view.h"

#include <algorithm>
#include <cstring>

using namespace brook;
using namespace brook::cuda;
using namespace brook::cudatest;

namespace {

// Round-to-nearest asymmetric min/max per group, fp16 scales; codes against the rounded scale.
QuantizedWeight quantizeForTest(const std::vector<float>& w, int N, int K, int bits, int groupSize)
{
    QuantizedWeight q;
    q.bits = bits;
    q.groupSize = groupSize;
    q.rows = N;
    q.cols = K;
    const int G = K / groupSize, maxCode = (1 << bits) - 1;
    q.packed.assign(size_t(N) * K * bits / 8, 0);
    q.scales.resize(size_t(N) * G);
    q.zeros.resize(size_t(N) * G);
    for (int n = 0; n < N; ++n) {
        for (int g = 0; g < G; ++g) {
            const float* group = w.data() + size_t(n) * K + size_t(g) * groupSize;
            const auto [lo, hi] = std::minmax_element(group, group + groupSize);
            const float scale = fp16ToFloat(floatToFp16(std::max((*hi - *lo) / float(maxCode), 1e-6f)));
            const int zero = std::clamp(int(std::lround(-*lo / scale)), 0, maxCode);
            q.scales[size_t(n) * G + g] = scale;
            q.zeros[size_t(n) * G + g] = uint8_t(zero);
            for (int i = 0; i < groupSize; ++i) {
                const int k = g * groupSize + i;
                const int code = std::clamp(int(std::lround(group[i] / scale)) + zero, 0, maxCode);
                if (bits == 8) q.packed[size_t(n) * K + k] = uint8_t(code);
                else q.packed[size_t(n) * K / 2 + k / 2] |= uint8_t(code << (4 * (k & 1)));
            }
        }
    }
    return q;
}

// w[n][k] = (q - zero) * scale straight from the documented packing.
std::vector<float> dequantizeForTest(const QuantizedWeight& q)
{
    const int N = q.rows, K = q.cols, G = K / q.groupSize;
    std::vector<float> out(size_t(N) * K);
    for (int n = 0; n < N; ++n) {
        for (int k = 0; k < K; ++k) {
            const int code = q.bits == 8 ? q.packed[size_t(n) * K + k]
                                         : (q.packed[size_t(n) * K / 2 + k / 2] >> (4 * (k & 1))) & 0xf;
            const size_t g = size_t(n) * G + k / q.groupSize;
            out[size_t(n) * K + k] = float(code - int(q.zeros[g])) * q.scales[g];
        }
    }
    return out;
}

// Fails with where and how badly got [M, N] misses want: the worst element, how many are off,
// the first few of those, and any non-finite value (which relativeError would skip).
void verifyClose(const std::vector<float>& got, const std::vector<float>& want, int M, int N, double tolerance)
{
    double scale = 1e-6, worst = 0;
    size_t worstAt = 0;
    for (size_t i = 0; i < want.size(); ++i) scale = std::max(scale, double(std::abs(want[i])));
    size_t bad = 0, nonFinite = 0;
    QString examples;
    for (size_t i = 0; i < want.size(); ++i) {
        const double diff = std::abs(double(got[i]) - double(want[i]));
        const bool finite = std::isfinite(got[i]);
        if (!finite) ++nonFinite;
        if (!finite || diff > worst) {
            worst = finite ? diff : INFINITY;
            worstAt = i;
        }
        if (!finite || diff > tolerance * scale) {
            if (bad < 6)
                examples += QString(" (m %1, n %2: got %3 want %4)").arg(i / N).arg(i % N).arg(got[i]).arg(want[i]);
            ++bad;
        }
    }
    const double err = worst / scale;
    const QString message = QString("relative error %1 (tolerance %2, max |want| %3): worst at m %4, n %5, got %6, "
                                    "want %7; %8 of %9 outputs off (%10 not finite), first:%11")
                                .arg(err)
                                .arg(tolerance)
                                .arg(scale)
                                .arg(worstAt / N)
                                .arg(worstAt % N)
                                .arg(got[worstAt])
                                .arg(want[worstAt])
                                .arg(bad)
                                .arg(size_t(M) * N)
                                .arg(nonFinite)
                                .arg(examples);
    if (err > tolerance / 10) qInfo().noquote() << "  " << message;  // visible on the GPU run's log
    QVERIFY2(bad == 0 && err <= tolerance, qPrintable(message));
}

struct Case {
    int M, N, K, bits, groupSize;
    bool bf16, outFloat, accumulate, gemm;
    SkinnyPrologue prologue;
};

template <typename E>
void runCase(const Case& c)
{
    const int M = c.M, N = c.N, K = c.K;
    const uint64_t seed = uint64_t(M) * 7919 + uint64_t(N) * 31 + uint64_t(K) + uint64_t(c.bits) * 104729;
    const QuantizedWeight q = quantizeForTest(randomFloats(size_t(N) * K, seed, 1.0f / 32), N, K, c.bits, c.groupSize);
    const std::vector<float> wRef = dequantizeForTest(q);
    DeviceBuffer weight(quantized_weight_device_bytes(q));
    const QuantDeviceWeight dw = upload_quantized_weight(q, weight.get());
    QVERIFY(quant_matmul_supported(dw));

    // f(x) as the kernel's shared rows hold it: the prologue's output rounded to E.
    std::vector<float> fx(size_t(M) * K);
    DeviceBuffer input, norm;
    const float eps = 1e-5f;
    if (c.prologue == SkinnyPrologue::RmsNorm) {
        const std::vector<float> residual = randomFloats(size_t(M) * K, seed + 1, 2.0f);
        std::vector<float> nw = randomFloats(size_t(K), seed + 2, 0.3f);
        for (auto& v : nw) v += 1.0f;
        const auto nwDevice = toDevice<E>(nw);
        input = upload(residual);
        norm = upload(nwDevice);
        cpu::rmsnorm(residual.data(), toHostFloat(nwDevice).data(), fx.data(), M, K, eps);
        fx = toHostFloat(toDevice<E>(fx));
    } else if (c.prologue == SkinnyPrologue::SiluMul) {
        const auto gateUp = toDevice<E>(randomFloats(size_t(M) * 2 * K, seed + 3, 2.0f));
        input = upload(gateUp);
        cpu::siluMul(toHostFloat(gateUp).data(), fx.data(), M, K);
        fx = toHostFloat(toDevice<E>(fx));
    } else {
        const auto x = toDevice<E>(randomFloats(size_t(M) * K, seed + 4));
        input = upload(x);
        fx = toHostFloat(x);
    }

    const std::vector<float> start = randomFloats(size_t(M) * N, seed + 5);
    std::vector<float> base(size_t(M) * N, 0.0f);
    DeviceBuffer out(size_t(M) * N * (c.outFloat ? 4 : 2));
    if (c.outFloat) {
        BROOK_CUDA_CHECK(cudaMemcpy(out.get(), start.data(), start.size() * 4, cudaMemcpyHostToDevice));
        if (c.accumulate) base = start;
    } else {
        const auto s = toDevice<E>(start);
        BROOK_CUDA_CHECK(cudaMemcpy(out.get(), s.data(), s.size() * 2, cudaMemcpyHostToDevice));
        if (c.accumulate) base = toHostFloat(s);
    }
    const ElementType type = c.bf16 ? ElementType::BF16 : ElementType::F16;
    auto launch = [&] {
        if (c.gemm) launch_quant_gemm(input.get(), dw, out.get(), M, type, c.outFloat, c.accumulate, nullptr);
        else
            launch_quant_gemv(input.get(), dw, out.get(), M, type, c.outFloat, c.accumulate, nullptr, c.prologue,
                              norm.get(), eps);
    };
    launch();
    BROOK_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> got =
        c.outFloat ? download<float>(out, size_t(M) * N) : toHostFloat(download<E>(out, size_t(M) * N));
    std::vector<float> want(size_t(M) * N);
    cpu::linear(fx.data(), wRef.data(), want.data(), M, K, N);
    for (size_t i = 0; i < want.size(); ++i) want[i] += base[i];

    double tolerance = 1e-2;
    if (c.prologue != SkinnyPrologue::None) tolerance = 1.5e-2;
    else if (!c.gemm && c.outFloat) tolerance = 1e-4;
    verifyClose(got, want, M, N, tolerance);

    if (!c.accumulate) {  // a second launch must give the very same bits (no atomics, fixed order)
        const std::vector<uint8_t> first = download<uint8_t>(out, out.bytes());
        launch();
        QVERIFY2(download<uint8_t>(out, out.bytes()) == first, "second launch differs: not deterministic");
    }
}

void addRow(const char* name, const Case& c)
{
    QTest::newRow(name) << c.M << c.N << c.K << c.bits << c.groupSize << c.bf16 << c.outFloat << c.accumulate << c.gemm
                        << int(c.prologue);
}

struct Shape {
    const char* name;
    int N, K;
};
constexpr Shape kErnieShapes[] = {{"qkv", 2560, 1024}, {"o", 1024, 2048}, {"gateup", 6144, 1024}, {"down", 1024, 3072}};

void addColumns()
{
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("K");
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("groupSize");
    QTest::addColumn<bool>("bf16");
    QTest::addColumn<bool>("outFloat");
    QTest::addColumn<bool>("accumulate");
    QTest::addColumn<bool>("gemm");
    QTest::addColumn<int>("prologue");
}

// The ERNIE shapes at the given M values for both bit widths; element type, output type and
// accumulate cycle through all eight combinations per bit width.
void addErnieRows(bool gemm, std::initializer_list<int> ms)
{
    for (int bits : {4, 8}) {
        int i = 0;
        for (const Shape& s : kErnieShapes) {
            for (int M : ms) {
                const Case c{
                    M, s.N, s.K, bits, 128, (i & 1) == 0, (i & 2) != 0, (i & 4) != 0, gemm, SkinnyPrologue::None};
                const QByteArray name = QString("%1 M%2 int%3 %4%5%6")
                                            .arg(s.name)
                                            .arg(M)
                                            .arg(bits)
                                            .arg(c.bf16 ? "bf16" : "fp16")
                                            .arg(c.outFloat ? " fp32out" : "")
                                            .arg(c.accumulate ? " +=" : "")
                                            .toUtf8();
                addRow(name.constData(), c);
                ++i;
            }
        }
    }
}

}  // namespace

class TestQuantMatmul : public QObject {
    Q_OBJECT
private slots:
    void gemv_data()
    {
        addColumns();
        addErnieRows(false, {1, 3, 8});
        const auto none = SkinnyPrologue::None;
        addRow("odd N1001 K96 g32 M5 int4", {5, 1001, 96, 4, 32, true, false, false, false, none});
        addRow("odd N1001 K96 g32 M2 int8 fp32out", {2, 1001, 96, 8, 32, false, true, false, false, none});
        addRow("g64 N2560 K1024 M2 int8", {2, 2560, 1024, 8, 64, true, true, false, false, none});
        addRow("g96 N136 K192 M4 int4", {4, 136, 192, 4, 96, true, true, true, false, none});
        addRow("g32 N1024 K2048 M7 int4", {7, 1024, 2048, 4, 32, false, true, false, false, none});
        addRow("K4096 N520 M8 int8", {8, 520, 4096, 8, 128, true, true, false, false, none});
        addRow("K4096 N520 M8 int4", {8, 520, 4096, 4, 128, false, true, true, false, none});
        addRow("lm-head-like N32771 K1024 M1 int4", {1, 32771, 1024, 4, 128, true, true, false, false, none});
        const auto norm = SkinnyPrologue::RmsNorm, silu = SkinnyPrologue::SiluMul;
        addRow("rmsnorm qkv M1 int4", {1, 2560, 1024, 4, 128, true, false, false, false, norm});
        addRow("rmsnorm gateup M8 int8 fp16 fp32out", {8, 6144, 1024, 8, 128, false, true, false, false, norm});
        addRow("silu down M1 int4", {1, 1024, 3072, 4, 128, true, false, false, false, silu});
        addRow("silu down M6 int8 fp32out +=", {6, 1024, 3072, 8, 128, true, true, true, false, silu});
    }
    void gemv() { runFetched(); }

    void gemm_data()
    {
        addColumns();
        addErnieRows(true, {1, 17, 300, 1000});
        const auto none = SkinnyPrologue::None;
        addRow("N1000 K1024 M300 int4", {300, 1000, 1024, 4, 128, true, false, false, true, none});
        addRow("N1000 K1024 M17 int8 fp32out +=", {17, 1000, 1024, 8, 128, false, true, true, true, none});
        addRow("odd N1001 K96 g32 M300 int4", {300, 1001, 96, 4, 32, true, true, false, true, none});
        addRow("odd N1001 K96 g32 M129 int8", {129, 1001, 96, 8, 32, false, false, false, true, none});
        addRow("g64 N2560 K1024 M200 int4 fp16", {200, 2560, 1024, 4, 64, false, false, false, true, none});
        addRow("g96 N136 K192 M65 int8", {65, 136, 192, 8, 96, true, true, false, true, none});
        addRow("g32 N384 K4096 M256 int4", {256, 384, 4096, 4, 32, true, true, false, true, none});
    }
    void gemm() { runFetched(); }

    // Dequantization to the element type must give exactly the rounded reference values.
    void dequantizeExact_data()
    {
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("bits");
        QTest::addColumn<int>("groupSize");
        QTest::addColumn<bool>("bf16");
        QTest::newRow("qkv int4 bf16") << 2560 << 1024 << 4 << 128 << true;
        QTest::newRow("qkv int8 fp16") << 2560 << 1024 << 8 << 128 << false;
        QTest::newRow("g96 N136 K192 int4 fp16") << 136 << 192 << 4 << 96 << false;
        QTest::newRow("g32 N1001 K96 int8 bf16") << 1001 << 96 << 8 << 32 << true;
    }
    void dequantizeExact()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(int, bits);
        QFETCH(int, groupSize);
        QFETCH(bool, bf16);
        bf16 ? checkDequantize<__nv_bfloat16>(N, K, bits, groupSize, ElementType::BF16)
             : checkDequantize<__half>(N, K, bits, groupSize, ElementType::F16);
    }

    // The device copy keeps every byte: codes as they are, scales as the fp16 of the (fp16-exact)
    // floats, zeros as they are; each part 256-byte aligned and inside the reported size.
    void uploadPreservesBytes_data()
    {
        QTest::addColumn<int>("bits");
        QTest::newRow("int4") << 4;
        QTest::newRow("int8") << 8;
    }
    void uploadPreservesBytes()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, bits);
        const int N = 40, K = 352, groupSize = 32;  // part sizes that are not multiples of 256
        const QuantizedWeight q = quantizeForTest(randomFloats(size_t(N) * K, 77, 0.1f), N, K, bits, groupSize);
        const size_t bytes = quantized_weight_device_bytes(q);
        QVERIFY(bytes >= q.packed.size() + q.scales.size() * 2 + q.zeros.size());
        DeviceBuffer buffer(bytes);
        BROOK_CUDA_CHECK(cudaMemset(buffer.get(), 0xab, bytes));
        const QuantDeviceWeight dw = upload_quantized_weight(q, buffer.get());
        QCOMPARE(dw.bits, bits);
        QCOMPARE(dw.groupSize, groupSize);
        QCOMPARE(dw.rows, N);
        QCOMPARE(dw.cols, K);
        const auto begin = reinterpret_cast<uintptr_t>(buffer.get()), end = begin + bytes;
        auto inside = [&](const void* p, size_t n) {
            const auto a = reinterpret_cast<uintptr_t>(p);
            return a % 256 == 0 && a >= begin && a + n <= end;
        };
        QVERIFY(inside(dw.packed, q.packed.size()));
        QVERIFY(inside(dw.scales, q.scales.size() * 2));
        QVERIFY(inside(dw.zeros, q.zeros.size()));

        std::vector<uint8_t> packed(q.packed.size()), zeros(q.zeros.size());
        std::vector<uint16_t> scales(q.scales.size());
        BROOK_CUDA_CHECK(cudaMemcpy(packed.data(), dw.packed, packed.size(), cudaMemcpyDeviceToHost));
        BROOK_CUDA_CHECK(cudaMemcpy(scales.data(), dw.scales, scales.size() * 2, cudaMemcpyDeviceToHost));
        BROOK_CUDA_CHECK(cudaMemcpy(zeros.data(), dw.zeros, zeros.size(), cudaMemcpyDeviceToHost));
        QVERIFY(packed == q.packed);
        QVERIFY(zeros == q.zeros);
        for (size_t i = 0; i < scales.size(); ++i)
            QVERIFY2(fp16ToFloat(scales[i]) == q.scales[i], qPrintable(QString("scale %1 changed").arg(i)));
    }

    void supportedShapes()
    {
        static const uint8_t byte = 0;
        static const __half half{};
        QuantDeviceWeight w;
        w.packed = &byte;
        w.scales = &half;
        w.zeros = &byte;
        w.rows = 2560;
        w.cols = 1024;
        QVERIFY(quant_matmul_supported(w));
        w.bits = 8;
        QVERIFY(quant_matmul_supported(w));
        w.groupSize = 96;
        QVERIFY(!quant_matmul_supported(w));  // 1024 % 96
        w.cols = 960;
        QVERIFY(quant_matmul_supported(w));
        w.groupSize = 48;
        QVERIFY(!quant_matmul_supported(w));  // not a multiple of 32
        w.groupSize = 128;
        w.cols = 1024;
        w.bits = 3;
        QVERIFY(!quant_matmul_supported(w));
        w.bits = 4;
        w.zeros = nullptr;
        QVERIFY(!quant_matmul_supported(w));
    }

    void uploadRejectsBadLayout()
    {
        QuantizedWeight q = quantizeForTest(randomFloats(64 * 128, 5, 0.1f), 64, 128, 4, 64);
        q.packed.pop_back();
        bool threw = false;
        try {
            upload_quantized_weight(q, nullptr);  // checked before any copy
        } catch (const CudaError& e) {
            threw = QString(e.what()).contains("packed");
        }
        QVERIFY(threw);
    }

private:
    template <typename E>
    void checkDequantize(int N, int K, int bits, int groupSize, ElementType type)
    {
        const QuantizedWeight q = quantizeForTest(randomFloats(size_t(N) * K, 99 + N, 0.05f), N, K, bits, groupSize);
        DeviceBuffer weight(quantized_weight_device_bytes(q)), out(size_t(N) * K * sizeof(E));
        launch_quant_dequantize(upload_quantized_weight(q, weight.get()), out.get(), type, nullptr);
        const std::vector<E> got = download<E>(out, size_t(N) * K);
        const std::vector<E> want = toDevice<E>(dequantizeForTest(q));
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            if (std::memcmp(&got[i], &want[i], sizeof(E)) != 0 && bad++ == 0) first = i;
        }
        QVERIFY2(bad == 0, qPrintable(QString("%1 of %2 values differ; first at n %3, k %4: got %5 want %6")
                                          .arg(bad)
                                          .arg(want.size())
                                          .arg(first / K)
                                          .arg(first % K)
                                          .arg(cuda::toFloat(got[first]))
                                          .arg(cuda::toFloat(want[first]))));
    }

    void runFetched()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(int, M);
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(int, bits);
        QFETCH(int, groupSize);
        QFETCH(bool, bf16);
        QFETCH(bool, outFloat);
        QFETCH(bool, accumulate);
        QFETCH(bool, gemm);
        QFETCH(int, prologue);
        const Case c{M, N, K, bits, groupSize, bf16, outFloat, accumulate, gemm, SkinnyPrologue(prologue)};
        bf16 ? runCase<__nv_bfloat16>(c) : runCase<__half>(c);
    }
};

QTEST_APPLESS_MAIN(TestQuantMatmul)
#include "test_quant_matmul.moc"
