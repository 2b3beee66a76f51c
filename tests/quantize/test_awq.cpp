// Tests for AWQ (engine/awq_calibrator.h, engine/awq_search.h) on tiny random-weight models:
//  - the calibrator's whole-sequence forward gives the CPU backend's logits at every position
//    (through Engine::promptLogits, itself anchored to a plain CpuBackend prefill);
//  - its statistics are the real inputs (layer 0's normed embeddings, recomputed here);
//  - on a synthetic Linear whose inputs have a few large channels, AWQ's output error at 4 bits
//    is clearly below RTN's, and the reported errors are reproducible;
//  - folding scales (random ones, and the searched ones) leaves the fp32 logits unchanged
//    (1e-5 relative), for GQA (o_proj not folded) and for MHA (o_proj folded into v_proj).
#include "../engine/engine_test_support.h"

#include "quantize/awq_calibrator.h"
#include "quantize/awq_search.h"
#include "engine/checkpoint.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/cpu_ops.h"
#include "engine/model_config.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>

using namespace brook;

namespace {

struct LoadedModel {
    ModelConfig config;
    std::unique_ptr<Checkpoint> checkpoint;
    cpu::CpuWeights weights;
};

LoadedModel load(const std::filesystem::path& dir)
{
    LoadedModel m;
    auto config = loadModelConfig(dir / "config.json");
    if (!config) qFatal("%s", config.error().c_str());
    m.config = *config;
    auto checkpoint = Checkpoint::open(dir);
    if (!checkpoint) qFatal("%s", checkpoint.error().c_str());
    m.checkpoint = std::move(checkpoint).value();
    auto weights = cpu::CpuWeights::load(*m.checkpoint, m.config);
    if (!weights) qFatal("%s", weights.error().c_str());
    m.weights = std::move(weights).value();
    return m;
}

std::vector<float> randomScales(std::mt19937& rng, int n)
{
    std::uniform_real_distribution<float> logScale(std::log(0.25f), std::log(4.0f));
    std::vector<float> s(static_cast<size_t>(n));
    for (float& v : s) v = std::exp(logScale(rng));
    return s;
}

const std::filesystem::path& mhaModelDir()
{
    static QTemporaryDir dir;
    static const bool written = [] {
        testing::TestModelOptions options;
        options.shape = testing::TestModelShape::tiny();
        options.shape.numKvHeads = options.shape.numHeads;  // MHA: v's output width == o's input width
        options.dtype = DType::F32;
        options.seed = 99;
        auto r = testing::writeTestModel(dir.path().toStdString(), options);
        if (!r) qFatal("writeTestModel: %s", r.error().c_str());
        return true;
    }();
    (void)written;
    static const std::filesystem::path path = dir.path().toStdString();
    return path;
}

// Folds `scales` into a copy of the model and checks the logits stay put.
// With random scales (`random`), also checks that the weights did change where they should.
void checkFoldKeepsLogits(const LoadedModel& m, const std::vector<AwqLayerScales>& scales,
                          std::span<const int32_t> tokens, bool random)
{
    const std::vector<float> before = AwqCalibrator(m.config, m.weights).logits(tokens);
    cpu::CpuWeights folded = m.weights;
    for (int l = 0; l < m.config.numLayers; ++l) foldAwqScales(m.config, scales[size_t(l)], folded.layers[size_t(l)]);
    if (random) {
        QVERIFY(folded.layers[0].qkv != m.weights.layers[0].qkv);
        QVERIFY(folded.layers[0].inputNorm != m.weights.layers[0].inputNorm);
        QVERIFY(folded.layers[0].postNorm != m.weights.layers[0].postNorm);
        QVERIFY(folded.layers[0].down != m.weights.layers[0].down);
        QCOMPARE(folded.layers[0].o != m.weights.layers[0].o, canFoldIntoV(m.config));
    }
    const std::vector<float> after = AwqCalibrator(m.config, folded).logits(tokens);
    const double err = testsupport::relativeError(after, before);
    QVERIFY2(err < 1e-5, qPrintable(QString("folded logits differ by %1").arg(err)));
}

}  // namespace

class TestAwq : public QObject {
    Q_OBJECT
private slots:
    void calibratorForwardMatchesCpuBackend()
    {
        const LoadedModel m = load(testsupport::tinyModelDir());
        std::mt19937 rng(21);
        const std::vector<int32_t> tokens = testsupport::randomPrompt(rng, 45, m.config.vocabSize);  // > 2 KV blocks
        const std::vector<float> mine = AwqCalibrator(m.config, m.weights).logits(tokens);

        auto engine = testsupport::launch(testsupport::cpuOptions());
        auto logits = engine->promptLogits(tokens);
        QVERIFY2(logits.ok(), logits.ok() ? "" : logits.error().c_str());
        QCOMPARE(logits->size(), mine.size());
        const double err = testsupport::relativeError(mine, *logits);
        QVERIFY2(err < 1e-4, qPrintable(QString("calibrator vs CPU backend: %1").arg(err)));

        // Anchor promptLogits itself: its last row is a plain prefill's logits.
        cpu::CpuBackendOptions options;
        options.numKvBlocks = 8;
        auto backend = cpu::CpuBackend::create(m.config, *m.checkpoint, options);
        QVERIFY(backend.ok());
        const std::vector<int32_t> blocks = {0, 1, 2, 3};
        BatchSequence prefill;
        prefill.tokens = tokens;
        prefill.blockTable = blocks;
        prefill.sample = true;
        const std::vector<float> last = (*backend)->logits(std::span<const BatchSequence>(&prefill, 1));
        const size_t V = size_t(m.config.vocabSize);
        QVERIFY(testsupport::relativeError(std::span<const float>(*logits).subspan(logits->size() - V), last) < 1e-5);

        QVERIFY(!engine->promptLogits({}).ok());
        QVERIFY(!engine->promptLogits({int32_t(m.config.vocabSize)}).ok());
    }

    void statisticsAreTheLinearInputs()
    {
        const LoadedModel m = load(testsupport::tinyModelDir());
        const int H = m.config.hiddenSize, N = 100;
        std::mt19937 rng(4);
        const std::vector<int32_t> tokens = testsupport::randomPrompt(rng, N, m.config.vocabSize);
        CalibrationOptions options;
        options.sequenceLength = 40;  // three sequences: 40, 40, 20
        options.sampleRows = 30;
        const auto stats = AwqCalibrator(m.config, m.weights).calibrate(tokens, options);
        QCOMPARE(int(stats.size()), m.config.numLayers);
        for (const LayerCalibration& layer : stats) {
            for (const LinearInputStats& in : layer.inputs) {
                QCOMPARE(in.count, int64_t(N));
                QCOMPARE(in.sampleRows(), 30);
            }
        }
        QCOMPARE(stats[0][LinearInput::O].cols, m.config.qDim());
        QCOMPARE(stats[0][LinearInput::Down].cols, m.config.intermediateSize);

        // Layer 0's q|k|v input is input_layernorm(embedding), whatever the position.
        std::vector<float> direct(size_t(N) * H);
        for (int t = 0; t < N; ++t)
            cpu::rmsnorm(&m.weights.embedding[size_t(tokens[size_t(t)]) * H], m.weights.layers[0].inputNorm.data(),
                         &direct[size_t(t) * H], 1, H, float(m.config.rmsNormEps));
        const LinearInputStats& qkv = stats[0][LinearInput::Qkv];
        const std::vector<float> mean = qkv.meanAbs();
        for (int k = 0; k < H; ++k) {
            double sum = 0;
            for (int t = 0; t < N; ++t) sum += std::abs(direct[size_t(t) * H + k]);
            QVERIFY(std::abs(mean[size_t(k)] - sum / N) < 1e-5 * std::max(1.0, sum / N));
        }
        for (int r = 0; r < qkv.sampleRows(); ++r) {
            bool found = false;
            for (int t = 0; t < N && !found; ++t)
                found = testsupport::relativeError(std::span<const float>(qkv.sample).subspan(size_t(r) * H, H),
                                                   std::span<const float>(direct).subspan(size_t(t) * H, H)) < 1e-6;
            QVERIFY2(found, qPrintable(QString("sample row %1 is no input row").arg(r)));
        }
    }

    void awqBeatsRtnWhenInputsHaveOutlierChannels()
    {
        const int K = 256, N = 96, n = 512;
        std::mt19937 rng(1);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> w(size_t(N) * K), x(size_t(n) * K);
        for (float& v : w) v = 0.05f * normal(rng);
        for (float& v : x) v = normal(rng);
        for (int channel : {3, 77, 150, 201})
            for (int t = 0; t < n; ++t) x[size_t(t) * K + channel] *= 30.0f;
        std::vector<float> meanAbs(size_t(K), 0.0f);
        for (int t = 0; t < n; ++t)
            for (int k = 0; k < K; ++k) meanAbs[size_t(k)] += std::abs(x[size_t(t) * K + k]) / n;

        const AwqSearch search({4, 128, 20});
        auto found = search.search(w, N, K, x, meanAbs, "synthetic");
        QVERIFY2(found.ok(), found.ok() ? "" : found.error().c_str());
        qInfo("alpha %.2f: output error AWQ %.4f, RTN %.4f", found->alpha, found->awqOutputError,
              found->rtnOutputError);
        QVERIFY(found->alpha > 0.0f);
        QVERIFY2(found->awqOutputError < 0.8 * found->rtnOutputError, "AWQ should cut the error by a fifth at least");
        // The reported numbers are what outputError computes for those scales.
        auto awq = search.outputError(w, N, K, x, found->scales);
        auto rtn = search.outputError(w, N, K, x, {});
        QVERIFY(awq.ok() && rtn.ok());
        QVERIFY(std::abs(*awq - found->awqOutputError) < 1e-9);
        QVERIFY(std::abs(*rtn - found->rtnOutputError) < 1e-9);

        // s = mean|x|^alpha, normalised so that max * min = 1; alpha 0 is plain RTN.
        const std::vector<float> s = AwqSearch::scalesForAlpha(meanAbs, 0.5f);
        const auto [lo, hi] = std::minmax_element(s.begin(), s.end());
        QVERIFY(std::abs(double(*lo) * *hi - 1.0) < 1e-5);
        QVERIFY(s[3] > 3.0f * s[4]);
        for (float v : AwqSearch::scalesForAlpha(meanAbs, 0.0f)) QCOMPARE(v, 1.0f);

        QVERIFY(!search
                     .search(w, N, K - 1, std::span<const float>(x).first(size_t(K - 1)),
                             std::span<const float>(meanAbs).first(size_t(K - 1)), "bad")
                     .ok());  // 255 is not a multiple of the group size
    }

    void foldingRandomScalesKeepsLogits_data()
    {
        QTest::addColumn<bool>("mha");
        QTest::newRow("gqa") << false;
        QTest::newRow("mha") << true;
    }

    void foldingRandomScalesKeepsLogits()
    {
        QFETCH(bool, mha);
        const LoadedModel m = load(mha ? mhaModelDir() : testsupport::tinyModelDir());
        QCOMPARE(canFoldIntoV(m.config), mha);
        std::mt19937 rng(mha ? 8 : 9);
        std::vector<AwqLayerScales> scales(size_t(m.config.numLayers));
        for (AwqLayerScales& s : scales) {
            s.qkv = randomScales(rng, m.config.hiddenSize);
            s.o = randomScales(rng, m.config.qDim());  // ignored under GQA
            s.gateUp = randomScales(rng, m.config.hiddenSize);
            s.down = randomScales(rng, m.config.intermediateSize);
        }
        const std::vector<int32_t> tokens = testsupport::randomPrompt(rng, 24, m.config.vocabSize);
        checkFoldKeepsLogits(m, scales, tokens, true);
    }

    void foldingSearchedScalesKeepsLogits()
    {
        const LoadedModel m = load(mhaModelDir());
        std::mt19937 rng(12);
        const std::vector<int32_t> calibration = testsupport::randomPrompt(rng, 200, m.config.vocabSize);
        const auto stats = AwqCalibrator(m.config, m.weights).calibrate(calibration, {64, 128});
        const AwqSearch search({4, 32, 20});
        std::vector<AwqLayerScales> scales(size_t(m.config.numLayers));
        bool neverWorse = true, someScaled = false;
        for (int l = 0; l < m.config.numLayers; ++l) {
            const cpu::CpuLayerWeights& w = m.weights.layers[size_t(l)];
            const LayerCalibration& in = stats[size_t(l)];
            const auto pick = [&](LinearInput which, const std::vector<float>& weight, int rows) {
                const LinearInputStats& s = in[which];
                auto r = search.search(weight, rows, s.cols, s.sample, s.meanAbs(), "layer");
                if (!r) qFatal("%s", r.error().c_str());
                neverWorse = neverWorse && r->awqOutputError <= r->rtnOutputError;
                someScaled = someScaled || r->alpha > 0.0f;
                return r->scales;
            };
            const int qkvRows = m.config.qDim() + 2 * m.config.kvDim();
            scales[size_t(l)].qkv = pick(LinearInput::Qkv, w.qkv, qkvRows);
            scales[size_t(l)].o = pick(LinearInput::O, w.o, m.config.hiddenSize);
            scales[size_t(l)].gateUp = pick(LinearInput::GateUp, w.gateUp, 2 * m.config.intermediateSize);
            scales[size_t(l)].down = pick(LinearInput::Down, w.down, m.config.hiddenSize);
        }
        QVERIFY(neverWorse);  // alpha 0 is RTN, so the search can only improve on it
        QVERIFY(someScaled);
        const std::vector<int32_t> tokens = testsupport::randomPrompt(rng, 24, m.config.vocabSize);
        checkFoldKeepsLogits(m, scales, tokens, false);
    }
};

QTEST_APPLESS_MAIN(TestAwq)
#include "test_awq.moc"
