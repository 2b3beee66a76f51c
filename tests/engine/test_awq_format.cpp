// AutoAWQ gemm tensors <-> QuantizedWeight: toAwqGemm then fromAwqGemm is exact; tensors packed
// here by hand, straight from the documented order (docs/model-ernie-4.5.md section 5: nibble j of each
// int32 holds logical column AWQ_ORDER[j] = [0,2,4,6,1,3,5,7]), unpack to the right codes; and
// wrong dtypes or shapes are errors naming the tensor.
#include "engine/awq_format.h"
#include "engine/quantized_weight.h"
#include "engine/tensor_view.h"

#include <QtTest>

#include <random>
#include <string>
#include <vector>

using namespace brook;

namespace {

const std::string kName = "model.layers.0.self_attn.q_proj";

TensorView view(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* data, size_t bytes)
{
    TensorView v;
    v.name = name;
    v.file = "model.safetensors";
    v.dtype = dtype;
    v.shape = std::move(shape);
    v.data = static_cast<const std::byte*>(data);
    v.numBytes = bytes;
    return v;
}

std::vector<float> randomWeights(std::mt19937& rng, int rows, int cols)
{
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::vector<float> w(size_t(rows) * size_t(cols));
    for (float& x : w) x = normal(rng) + 1e-4f;
    return w;
}

// The tensors of a hand-built case: codes[k][n], zeros[g][n], scales[g][n], and the packing.
struct HandCase {
    int N, K, G, bits;
    std::vector<std::vector<int>> codes, zeros;
    std::vector<uint16_t> scales;  // [K/G, N] fp16
    std::vector<int32_t> qweight, qzeros;
};

HandCase handPacked(int N, int K, int G, int bits, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> code(0, (1 << bits) - 1);
    std::uniform_real_distribution<float> scale(0.001f, 0.1f);
    HandCase c{N, K, G, bits, {}, {}, {}, {}, {}};
    c.codes.assign(size_t(K), std::vector<int>(size_t(N)));
    for (auto& row : c.codes)
        for (int& v : row) v = code(rng);
    c.zeros.assign(size_t(K / G), std::vector<int>(size_t(N)));
    for (auto& row : c.zeros)
        for (int& v : row) v = code(rng);
    for (int i = 0; i < K / G * N; ++i) c.scales.push_back(floatToFp16(scale(rng)));

    // Straight from the doc: 4 bits, nibble j (bits 4j..4j+3) <- column order[j] of the word's
    // eight; 8 bits (Brook's extension), byte j <- column j.
    const int order4[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    const int perWord = 32 / bits;
    auto pack = [&](const std::vector<std::vector<int>>& rows) {
        std::vector<int32_t> out;
        for (const auto& row : rows)
            for (int word = 0; word < N / perWord; ++word) {
                uint32_t v = 0;
                for (int j = 0; j < perWord; ++j) {
                    const int column = word * perWord + (bits == 4 ? order4[j] : j);
                    v |= uint32_t(row[size_t(column)]) << (bits * j);
                }
                out.push_back(int32_t(v));
            }
        return out;
    };
    c.qweight = pack(c.codes);
    c.qzeros = pack(c.zeros);
    return c;
}

Result<QuantizedWeight> unpack(const HandCase& c)
{
    const int64_t words = c.N * c.bits / 32;
    const TensorView qw = view(kName + ".qweight", DType::I32, {c.K, words}, c.qweight.data(), c.qweight.size() * 4);
    const TensorView qz = view(kName + ".qzeros", DType::I32, {c.K / c.G, words}, c.qzeros.data(), c.qzeros.size() * 4);
    const TensorView sc = view(kName + ".scales", DType::F16, {c.K / c.G, c.N}, c.scales.data(), c.scales.size() * 2);
    return fromAwqGemm(qw, qz, sc, c.N, c.K, c.bits, c.G, kName);
}

}  // namespace

class TestAwqFormat : public QObject {
    Q_OBJECT
private slots:
    void roundTripIsExact_data()
    {
        QTest::addColumn<int>("bits");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("groupSize");
        QTest::newRow("int4 16x256 g128") << 4 << 16 << 256 << 128;
        QTest::newRow("int4 40x192 g64") << 4 << 40 << 192 << 64;
        QTest::newRow("int8 12x256 g128") << 8 << 12 << 256 << 128;
        QTest::newRow("int8 36x96 g32") << 8 << 36 << 96 << 32;
    }
    void roundTripIsExact()
    {
        QFETCH(int, bits);
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, groupSize);
        std::mt19937 rng(uint32_t(rows * cols + bits));
        auto q = quantizeRtn(randomWeights(rng, rows, cols), rows, cols, bits, groupSize);
        QVERIFY(q.ok());
        const AwqTensors t = toAwqGemm(*q);
        QCOMPARE(t.qweight.size(), size_t(cols) * size_t(rows * bits / 32));
        QCOMPARE(t.qzeros.size(), size_t(cols / groupSize) * size_t(rows * bits / 32));
        QCOMPARE(t.scales.size(), size_t(cols / groupSize) * size_t(rows));
        auto back = fromAwqGemm(t, bits, groupSize, kName);
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().c_str());
        QCOMPARE(back->rows, rows);
        QCOMPARE(back->cols, cols);
        QCOMPARE(back->bits, bits);
        QCOMPARE(back->groupSize, groupSize);
        QVERIFY(back->packed == q->packed);
        QVERIFY(back->zeros == q->zeros);
        QVERIFY(back->scales == q->scales);  // fp16-exact scales survive the fp16 tensor
    }

    // Codes, zeros and scales of hand-packed tensors, checked through the doc's reverse order
    // too: logical column n of a word sits in nibble AWQ_REVERSE_ORDER[n] = [0,4,1,5,2,6,3,7].
    void handPackedNibbleOrder_data()
    {
        QTest::addColumn<int>("bits");
        QTest::addColumn<int>("rows");
        QTest::newRow("int4 N=8") << 4 << 8;
        QTest::newRow("int4 N=16") << 4 << 16;
        QTest::newRow("int8 N=8") << 8 << 8;
    }
    void handPackedNibbleOrder()
    {
        QFETCH(int, bits);
        QFETCH(int, rows);
        const int K = 8, G = 4;
        const HandCase c = handPacked(rows, K, G, bits, uint32_t(rows * 7 + bits));
        if (bits == 4) {
            const int reverse[8] = {0, 4, 1, 5, 2, 6, 3, 7};
            for (int k = 0; k < K; ++k)
                for (int n = 0; n < rows; ++n) {
                    const uint32_t word = uint32_t(c.qweight[size_t(k * (rows / 8) + n / 8)]);
                    QCOMPARE(int((word >> (4 * reverse[n % 8])) & 0xF), c.codes[size_t(k)][size_t(n)]);
                }
        }
        auto q = unpack(c);
        QVERIFY2(q.ok(), q.ok() ? "" : q.error().c_str());
        for (int k = 0; k < K; ++k)
            for (int n = 0; n < rows; ++n) {
                QCOMPARE(int(q->code(n, k)), c.codes[size_t(k)][size_t(n)]);
                const int g = k / G;
                const float scale = fp16ToFloat(c.scales[size_t(g * rows + n)]);
                QCOMPARE(int(q->zeros[size_t(n * (K / G) + g)]), c.zeros[size_t(g)][size_t(n)]);
                QCOMPARE(q->scales[size_t(n * (K / G) + g)], scale);
                QCOMPARE(q->value(n, k), float(c.codes[size_t(k)][size_t(n)] - c.zeros[size_t(g)][size_t(n)]) * scale);
            }
        // And packing Brook's weight again gives the hand-made ints back.
        const AwqTensors t = toAwqGemm(*q);
        QVERIFY(t.qweight == c.qweight);
        QVERIFY(t.qzeros == c.qzeros);
        QVERIFY(t.scales == c.scales);
    }

    void mismatchesNameTheTensor()
    {
        const HandCase c = handPacked(16, 8, 4, 4, 99);
        QVERIFY(unpack(c).ok());
        const int64_t words = 2;
        const TensorView qw = view(kName + ".qweight", DType::I32, {8, words}, c.qweight.data(), c.qweight.size() * 4);
        const TensorView qz = view(kName + ".qzeros", DType::I32, {2, words}, c.qzeros.data(), c.qzeros.size() * 4);
        const TensorView sc = view(kName + ".scales", DType::F16, {2, 16}, c.scales.data(), c.scales.size() * 2);
        auto expectError = [](const Result<QuantizedWeight>& r, const std::string& tensor, const std::string& detail) {
            QVERIFY(!r.ok());
            QVERIFY2(r.error().find(tensor) != std::string::npos, r.error().c_str());
            QVERIFY2(r.error().find(detail) != std::string::npos, r.error().c_str());
        };

        TensorView wrong = qw;
        wrong.dtype = DType::F32;
        expectError(fromAwqGemm(wrong, qz, sc, 16, 8, 4, 4, kName), kName + ".qweight", "I32");
        wrong = qz;
        wrong.shape = {4, 1};
        expectError(fromAwqGemm(qw, wrong, sc, 16, 8, 4, 4, kName), kName + ".qzeros", "[2, 2]");
        wrong = sc;
        wrong.dtype = DType::BF16;
        expectError(fromAwqGemm(qw, qz, wrong, 16, 8, 4, 4, kName), kName + ".scales", "F16");
        wrong = sc;
        wrong.shape = {16, 2};  // transposed
        expectError(fromAwqGemm(qw, qz, wrong, 16, 8, 4, 4, kName), kName + ".scales", "[2, 16]");
        // The same tensors read as 8-bit need twice the words: qweight's shape is wrong.
        expectError(fromAwqGemm(qw, qz, sc, 16, 8, 8, 4, kName), kName + ".qweight", "[8, 4]");
        // A group size that does not divide K, and a width AWQ cannot pack.
        expectError(fromAwqGemm(qw, qz, sc, 16, 8, 4, 3, kName), kName, "group size 3");
        expectError(fromAwqGemm(qw, qz, sc, 12, 8, 4, 4, kName), kName, "multiple of 8");
        expectError(fromAwqGemm(qw, qz, sc, 16, 8, 2, 4, kName), kName, "bits");
    }
};

QTEST_APPLESS_MAIN(TestAwqFormat)
#include "test_awq_format.moc"
