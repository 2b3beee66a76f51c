// The whole CPU forward pass on every vector path this CPU supports, against the scalar path,
// for a bf16 checkpoint kept in bf16 and for --quantization int8 kept in int8; and the weight
// memory each format takes. (HF parity of the fp32 path: test_hf_reference.)
//
// Tolerances (relative to the largest |logit|, as test_hf_reference measures):
//  - widening paths: the same fp32 products as the scalar path in another summation order;
//    1e-4, the bound test_hf_reference uses for fp32 against transformers.
//  - int8 (Linears and head): each matmul equals the scalar one bit for bit for the same input
//    (test_cpu_gemm), but the element-wise ops sum in another order on each path, and a last-bit
//    difference in an activation can round it to the neighbouring int8 code: one product moves
//    by |w| d (d = max|x| / 127 of its block of 32), a few 1e-3 of one output in the worst
//    case. Such flips are rare (a value must sit within ~1e-7 of a rounding midpoint); we allow
//    1e-3, ten times the widening bound, on every path (attention is fp32 on all of them).
//  - Avx512Bf16: every Linear input is rounded to bf16 (relative 2^-9 per value) before
//    vdpbf16ps, prompts and decodes alike (attention stays fp32). Through 2 layers that is 13
//    roundings of 2^-9 on a logit's way; independent roundings add as a root sum, ~7e-3, and
//    the tiny model measured 3.5e-3 (ERNIE's full shape 6.3e-3 against transformers,
//    docs/benchmarks.md). We allow 2e-2.
#include "engine_test_support.h"
#include "random_paged_cache.h"

#include "engine/checkpoint.h"
#include "engine/cpu/cpu_attention.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/cpu_gemm.h"
#include "engine/cpu/cpu_vector_ops.h"
#include "engine/model_config.h"
#include "testing/test_model_writer.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <numeric>
#include <random>

using namespace brook;
using namespace brook::cpu;

namespace {

double relativeError(const std::vector<float>& a, const std::vector<float>& b)
{
    double diff = 0, scale = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        diff = std::max(diff, double(std::abs(a[i] - b[i])));
        scale = std::max(scale, double(std::abs(b[i])));
    }
    return diff / scale;
}

using Model = testsupport::OpenedTestModel;

std::unique_ptr<Model> writeModel(DType dtype)
{
    testing::TestModelOptions options;
    options.shape = testing::TestModelShape::tiny();
    options.dtype = dtype;
    return testsupport::openTestModel(options);
}

std::unique_ptr<CpuBackend> makeBackend(const Model& m, CpuIsa isa, int quantBits = 0, int warmupTokens = 0)
{
    CpuBackendOptions options;
    options.numKvBlocks = 16;
    options.warmupTokens = warmupTokens;
    options.isa = isa;
    options.quantization.bits = quantBits;
    options.quantization.groupSize = 32;  // divides the tiny shape's 64 and 192
    auto backend = CpuBackend::create(m.config, *m.checkpoint, options);
    if (!backend) qFatal("%s", backend.error().c_str());
    return std::move(backend).value();
}

// Logits of a 20-token prompt (one prefill step), then of 3 single-token decode steps.
std::vector<std::vector<float>> run(CpuBackend& backend, int vocab)
{
    std::vector<int32_t> tokens(23);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t((i * 37 + 5) % size_t(vocab));
    const std::vector<int32_t> blocks = {0, 1};
    std::vector<std::vector<float>> out;
    BatchSequence prompt{std::span(tokens.data(), 20), 0, blocks, true, {}};
    out.push_back(backend.logits(std::span(&prompt, 1)));
    for (int i = 20; i < 23; ++i) {
        BatchSequence decode{std::span(tokens.data() + i, 1), i, blocks, true, {}};
        out.push_back(backend.logits(std::span(&decode, 1)));
    }
    return out;
}

}  // namespace

class TestCpuBackendPaths : public QObject {
    Q_OBJECT

private slots:
    // The load-time warm-up writes dummy keys and values into the first blocks and leaves the
    // step buffers sized for its tokens: a request that then gets those blocks must see exactly
    // the logits of a backend that never warmed up (attention reads only slots its own steps wrote).
    void warmUpPassChangesNoLogits()
    {
        auto m = writeModel(DType::BF16);
        const CpuIsa isa = activeCpuIsa();
        const auto cold = run(*makeBackend(*m, isa), m->config.vocabSize);
        const auto warmed = run(*makeBackend(*m, isa, 0, 200), m->config.vocabSize);
        QCOMPARE(warmed.size(), cold.size());
        for (size_t i = 0; i < cold.size(); ++i) QVERIFY2(warmed[i] == cold[i], qPrintable(QString("step %1").arg(i)));
    }

    void bf16WeightsStayBf16()
    {
        auto bf16 = writeModel(DType::BF16);
        auto f32 = writeModel(DType::F32);
        const int64_t bf16Bytes = makeBackend(*bf16, CpuIsa::Scalar)->memory().weightsBytes;
        const int64_t f32Bytes = makeBackend(*f32, CpuIsa::Scalar)->memory().weightsBytes;
        // Only the norms stay fp32, so bf16 is just over half of fp32.
        QVERIFY2(bf16Bytes * 2 <= f32Bytes + 64 * 1024, qPrintable(QString("%1 vs %2").arg(bf16Bytes).arg(f32Bytes)));
        // int8 with group 32: 1 byte a weight + 8 bytes of scale and offset a group, 0.625 of bf16
        // (plus the fp32 norms), embedding / head included; keeping the head bf16 (this model's
        // embedding is 60% of its weights) puts it near 0.85.
        const int64_t int8Bytes = makeBackend(*bf16, CpuIsa::Scalar, 8)->memory().weightsBytes;
        QVERIFY2(int8Bytes < bf16Bytes * 0.7, qPrintable(QString("%1 vs %2").arg(int8Bytes).arg(bf16Bytes)));
        // int4: half a byte a Linear weight, the same int8 head: below int8, above half of it.
        const int64_t int4Bytes = makeBackend(*bf16, CpuIsa::Scalar, 4)->memory().weightsBytes;
        QVERIFY2(int4Bytes < int8Bytes && int4Bytes > int8Bytes / 2,
                 qPrintable(QString("%1 vs %2").arg(int4Bytes).arg(int8Bytes)));
        qputenv("BROOK_CPU_INT8_HEAD", "0");
        const int64_t bf16HeadBytes = makeBackend(*bf16, CpuIsa::Scalar, 8)->memory().weightsBytes;
        qunsetenv("BROOK_CPU_INT8_HEAD");
        QVERIFY2(bf16HeadBytes > bf16Bytes * 0.7 && bf16HeadBytes < bf16Bytes,
                 qPrintable(QString("%1 vs %2").arg(bf16HeadBytes).arg(bf16Bytes)));
    }

    void bf16EveryPathMatchesScalar()
    {
        auto model = writeModel(DType::BF16);
        const auto want = run(*makeBackend(*model, CpuIsa::Scalar), model->config.vocabSize);
        for (CpuIsa isa : supportedCpuIsas()) {
            const auto got = run(*makeBackend(*model, isa), model->config.vocabSize);
            const double promptBound = isa == CpuIsa::Avx512Bf16 ? 2e-2 : 1e-4;
            const double promptError = relativeError(got[0], want[0]);
            QVERIFY2(promptError < promptBound,
                     qPrintable(QString("%1 prompt: %2").arg(cpuIsaName(isa)).arg(promptError)));
            for (size_t step = 1; step < got.size(); ++step) {
                // The decode steps read K/V the prompt step wrote, so they inherit its error.
                const double e = relativeError(got[step], want[step]);
                QVERIFY2(e < promptBound, qPrintable(QString("%1 step %2: %3").arg(cpuIsaName(isa)).arg(step).arg(e)));
            }
        }
    }

    // Attention's block kernels on every path against plain double sums: a block's scores from
    // its transposed K tile (blocks partly filled, heads in runs of 8 / 4 / 2 / 1) and the
    // weighted sum of its V rows; and taking the heads one call at a time gives the same floats
    // as all in one call (so a task's grouping changes no result).
    void attentionTileKernelsMatchPlainSums()
    {
        std::mt19937 rng(17);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        for (auto [n, bs, count, heads] : {std::tuple{128, 16, 16, 8},
                                           {128, 16, 5, 8},
                                           {64, 16, 13, 15},
                                           {256, 16, 16, 3},
                                           {48, 8, 7, 6},
                                           {128, 32, 29, 8},
                                           {128, 16, 1, 1}}) {
            const int64_t qStride = n + 16, outStride = bs + 3, stride = 2 * n + 16;
            std::vector<float> q(size_t(heads * qStride)), kt(size_t(n * bs)), rows(size_t(count * stride)),
                w(size_t(heads * outStride)), y0(size_t(heads * qStride));
            for (auto* values : {&q, &kt, &rows, &w, &y0})
                for (float& f : *values) f = dist(rng);
            for (int j = count; j < bs; ++j)  // slots past `count` were never written: must not matter
                for (int d = 0; d < n; ++d) kt[size_t(d * bs + j)] = std::numeric_limits<float>::quiet_NaN();
            for (CpuIsa isa : supportedCpuIsas()) {
                const CpuVectorOps& ops = CpuVectorOps::forIsa(isa);
                const QString where = QString("%1 n %2 bs %3 count %4").arg(cpuIsaName(isa)).arg(n).arg(bs).arg(count);
                std::vector<float> scores(size_t(heads * outStride), -7.0f), oneByOne(scores);
                ops.scoresTile(q.data(), heads, qStride, kt.data(), bs, count, n, 0.125f, scores.data(), outStride);
                for (int h = 0; h < heads; ++h)
                    ops.scoresTile(&q[size_t(h * qStride)], 1, qStride, kt.data(), bs, count, n, 0.125f,
                                   &oneByOne[size_t(h * outStride)], outStride);
                QVERIFY2(scores == oneByOne, qPrintable("scoresTile grouping, " + where));
                for (int h = 0; h < heads; ++h) {
                    for (int j = 0; j < count; ++j) {
                        double want = 0;
                        for (int d = 0; d < n; ++d) want += double(q[size_t(h * qStride + d)]) * kt[size_t(d * bs + j)];
                        want *= 0.125;
                        const float got = scores[size_t(h * outStride + j)];
                        QVERIFY2(std::abs(got - want) <= 1e-5 * (1 + std::abs(want)),
                                 qPrintable("scoresTile " + where));
                    }
                    QCOMPARE(scores[size_t(h * outStride + count)], -7.0f);  // nothing past `count` written
                }

                std::vector<float> y(y0), yOneByOne(y0);
                ops.weightedRows(y.data(), heads, qStride, w.data(), outStride, rows.data(), stride, count, n);
                for (int h = 0; h < heads; ++h)
                    ops.weightedRows(&yOneByOne[size_t(h * qStride)], 1, qStride, &w[size_t(h * outStride)], outStride,
                                     rows.data(), stride, count, n);
                QVERIFY2(y == yOneByOne, qPrintable("weightedRows grouping, " + where));
                for (int h = 0; h < heads; ++h)
                    for (int i = 0; i < n; ++i) {
                        double want = y0[size_t(h * qStride + i)];
                        for (int r = 0; r < count; ++r)
                            want += double(w[size_t(h * outStride + r)]) * rows[size_t(r * stride + i)];
                        const float got = y[size_t(h * qStride + i)];
                        QVERIFY2(std::abs(got - want) <= 1e-5 * (1 + std::abs(want)),
                                 qPrintable("weightedRows " + where));
                    }

                std::vector<float> x(size_t(count * 3 + 1));
                for (float& f : x) f = dist(rng) * 10;
                std::vector<float> e(x);
                const float sum = ops.expShifted(e.data(), int(e.size()));
                const float maxValue = *std::max_element(x.begin(), x.end());
                double wantSum = 0;
                for (size_t i = 0; i < x.size(); ++i) {
                    const double want = std::exp(double(x[i]) - maxValue);
                    wantSum += want;
                    QVERIFY2(std::abs(e[i] - want) <= 1e-6, qPrintable("expShifted " + where));
                }
                QVERIFY2(std::abs(sum - wantSum) <= 1e-5 * wantSum, qPrintable("expShifted sum " + where));
            }
        }
    }

    // The whole attention of prompts over a cached history and of decodes, on every path, against
    // cpu_ops' plain reference: K in the CPU backend's Tiles layout and the same keys as rows give
    // the reference the same floats, and the fast kernels stay within fp32 reordering of it (the
    // never-written slots of the last block hold NaN, which must not reach any output).
    void attentionMatchesTheReferenceOnEveryPath()
    {
        constexpr int kHeads = 16, kKvHeads = 2, kHeadDim = 128;
        std::mt19937 rng(29);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        for (auto [blockSize, n, context] :
             {std::tuple{16, 40, 0}, {16, 17, 70}, {16, 1, 90}, {8, 9, 30}, {32, 3, 61}}) {
            const testsupport::RandomPagedCache cache(blockSize, context + n, kKvHeads, kHeadDim, rng);
            std::vector<float> q(size_t(n) * kHeads * kHeadDim);
            for (float& f : q) f = dist(rng);
            const std::vector<int32_t>& table = cache.table;
            const PagedKv rowsKv = cache.rows(), tilesKv = cache.tiles();
            std::vector<float> want(q.size()), fromTiles(q.size());
            pagedAttention(q.data(), want.data(), n, kHeads, context, table, rowsKv);
            pagedAttention(q.data(), fromTiles.data(), n, kHeads, context, table, tilesKv);
            QVERIFY(fromTiles == want);
            CpuThreadPool pool(2);
            for (CpuIsa isa : supportedCpuIsas()) {
                std::vector<float> got(q.size());
                pagedAttentionFast(q.data(), got.data(), n, kHeads, context, table, tilesKv, CpuVectorOps::forIsa(isa),
                                   &pool);
                const double e = relativeError(got, want);
                QVERIFY2(e < 1e-5, qPrintable(QString("%1 bs %2 n %3 context %4: %5")
                                                  .arg(cpuIsaName(isa))
                                                  .arg(blockSize)
                                                  .arg(n)
                                                  .arg(context)
                                                  .arg(e)));
            }
        }
    }

    // A batch of decodes runs each query's KV heads in one task (whole cache slots); one decode
    // runs a task per KV head. Both give every head the same floats, on every path.
    void attentionTaskGroupingChangesNoFloats()
    {
        constexpr int kSequences = 8, kHeads = 16, kKvHeads = 2, kHeadDim = 128, kBlockSize = 16, kKeys = 40;
        constexpr int kBlocksPerSequence = (kKeys + kBlockSize - 1) / kBlockSize;
        const size_t cacheFloats = size_t(kSequences) * kBlocksPerSequence * kBlockSize * kKvHeads * kHeadDim;
        std::mt19937 rng(23);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        std::vector<float> k(cacheFloats), v(cacheFloats), q(size_t(kSequences) * kHeads * kHeadDim);
        for (auto* values : {&k, &v, &q})
            for (float& f : *values) f = dist(rng);
        std::vector<int32_t> tables(size_t(kSequences) * kBlocksPerSequence);
        std::iota(tables.begin(), tables.end(), 0);
        std::shuffle(tables.begin(), tables.end(), rng);  // blocks scattered, as a long-running cache has them
        const PagedKv kv{k.data(), v.data(), kBlockSize, kKvHeads, kHeadDim, PagedKv::KeyLayout::Tiles};
        CpuThreadPool pool(2);
        for (CpuIsa isa : supportedCpuIsas()) {
            const CpuVectorOps& ops = CpuVectorOps::forIsa(isa);
            std::vector<float> batched(q.size()), single(q.size());
            std::vector<AttentionSequence> batch;
            for (int s = 0; s < kSequences; ++s) {
                const size_t offset = size_t(s) * kHeads * kHeadDim;
                const auto table =
                    std::span<const int32_t>(tables).subspan(size_t(s) * kBlocksPerSequence, kBlocksPerSequence);
                const AttentionSequence seq{&q[offset], &batched[offset], 1, kKeys - 1 - s, table};
                batch.push_back(seq);
                const AttentionSequence alone{&q[offset], &single[offset], 1, kKeys - 1 - s, table};
                pagedAttentionBatch(std::span(&alone, 1), kHeads, kv, ops, &pool);
            }
            pagedAttentionBatch(batch, kHeads, kv, ops, &pool);
            QVERIFY2(batched == single, cpuIsaName(isa));
        }
    }

    void int8EveryPathMatchesScalar_data()
    {
        QTest::addColumn<int>("bits");
        QTest::addRow("int8") << 8;
        QTest::addRow("int4") << 4;
    }

    void int8EveryPathMatchesScalar()
    {
        QFETCH(int, bits);
        auto model = writeModel(DType::BF16);
        const auto want = run(*makeBackend(*model, CpuIsa::Scalar, bits), model->config.vocabSize);
        for (CpuIsa isa : supportedCpuIsas()) {
            const auto got = run(*makeBackend(*model, isa, bits), model->config.vocabSize);
            for (size_t step = 0; step < got.size(); ++step) {
                const double e = relativeError(got[step], want[step]);
                QVERIFY2(e < 1e-3, qPrintable(QString("%1 step %2: %3").arg(cpuIsaName(isa)).arg(step).arg(e)));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestCpuBackendPaths)
#include "test_cpu_backend_paths.moc"
