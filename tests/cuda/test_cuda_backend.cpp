// The CUDA backend against references: Hugging Face transformers' logits (tests/data/hf_tiny),
// the CPU backend on the same weights (a head_dim-128 shape and the full ERNIE-0.3B shape),
// greedy tokens where the reference's top-2 margin is clear, and the engine on the GPU:
// batched == alone, preemption and cancellation free every block.
#include "cuda_engine_test_support.h"
#include "cuda_test_support.h"

#include "../engine/engine_test_support.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_device.h"
#include "cuda/load_plan.h"
#include "engine/checkpoint.h"
#include "engine/quantized_layer_loader.h"
#include "engine/rope_frequencies.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/cpu_features.h"
#include "engine/safetensors_file.h"
#include "engine/tokenizer.h"

#include <algorithm>
#include <cstdlib>

using namespace brook;
using namespace brook::cudatest;

namespace {

struct Margin {
    int32_t top = 0;
    float gap = 0;  // top-1 minus top-2 logit
};

Margin margin(std::span<const float> row)
{
    Margin m;
    float first = -1e30f, second = -1e30f;
    for (size_t i = 0; i < row.size(); ++i) {
        if (row[i] > first) {
            second = first;
            first = row[i];
            m.top = int32_t(i);
        } else if (row[i] > second) {
            second = row[i];
        }
    }
    m.gap = first - second;
    return m;
}

std::unique_ptr<cuda::CudaBackend> makeCuda(const ModelConfig& config, const Checkpoint& checkpoint,
                                            const std::string& dtype, bool eager, const std::string& quantization = {},
                                            const cuda::CudaFeatures& features = {})
{
    cuda::CudaBackendOptions o;
    auto dtypeChoice = parseDTypeChoice(dtype);
    if (!dtypeChoice) qFatal("dtype: %s", dtypeChoice.error().c_str());
    o.dtype = *dtypeChoice;
    auto spec = resolveQuantization(config, quantization);
    if (!spec) qFatal("quantization: %s", spec.error().c_str());
    o.quantization = *spec;
    o.maxModelLen = 1024;
    o.maxNumSeqs = 8;
    o.maxNumBatchedTokens = 512;
    o.numKvBlocks = 64;
    o.enforceEager = eager;
    o.gpuMemoryUtilization = 0.5;
    o.features = features;
    auto backend = cuda::CudaBackend::create(config, checkpoint, o);
    if (!backend) qFatal("CudaBackend::create: %s", backend.error().c_str());
    return std::move(backend).value();
}

// Teacher-forced comparison: prefill `prompt`, then feed the reference's argmax for `steps`
// decode steps. Returns the worst relative logit error; counts argmax agreement on clear margins.
struct Comparison {
    double worst = 0;
    int clearSteps = 0, agreeing = 0;
};

Comparison compare(Backend& test, Backend& reference, std::vector<int32_t> tokens, int steps, float clearGap)
{
    std::vector<int32_t> blocks(64);
    for (int i = 0; i < 64; ++i) blocks[size_t(i)] = 63 - i;
    Comparison c;
    int cached = 0;
    for (int step = 0; step <= steps; ++step) {
        BatchSequence s{std::span(tokens.data() + cached, tokens.size() - size_t(cached)), cached, blocks, true, {}};
        const std::vector<float> want = reference.logits(std::span(&s, 1));
        const std::vector<float> got = test.logits(std::span(&s, 1));
        c.worst = std::max(c.worst, relativeError(got, want));
        const Margin m = margin(want);
        if (m.gap > clearGap) {
            ++c.clearSteps;
            c.agreeing += margin(got).top == m.top ? 1 : 0;
        }
        cached = int(tokens.size());
        tokens.push_back(m.top);
    }
    return c;
}

// The CUDA-vs-CPU comparisons' model: the full ERNIE-0.3B shape, or a small one with ERNIE's
// head_dim 128 and GQA; bf16 weights, so both backends start from the same values.
testing::TestModelOptions comparisonModel(bool full)
{
    testing::TestModelOptions options;
    options.shape = full ? testing::TestModelShape::ernie03b() : testing::TestModelShape::tiny();
    if (!full) {
        options.shape.hiddenSize = 256;
        options.shape.numHeads = 8;
        options.shape.numKvHeads = 2;
        options.shape.headDim = 128;
        options.shape.intermediateSize = 512;
        options.shape.numLayers = 3;
    }
    options.dtype = DType::BF16;
    return options;
}

// The comparison model (comparisonModel), written to a temporary folder and opened.
std::unique_ptr<testsupport::OpenedTestModel> openComparisonModel(bool full)
{
    return testsupport::openTestModel(comparisonModel(full));
}

LaunchOptions gpuEngineOptions()
{
    LaunchOptions o = testsupport::cpuOptions();
    o.modelDir = gpuModelDir();
    o.device = "cuda";
    o.gpuMemoryUtilization = 0.3;
    return o;
}

}  // namespace

class TestCudaBackend : public QObject {
    Q_OBJECT
private slots:
    void matchesTransformers_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<double>("tolerance");
        // Weights rounded to 8 (bf16) or 11 (fp16) significant bits move logits by ~1e-2.
        QTest::newRow("bfloat16") << "bfloat16" << 6e-2;
        QTest::newRow("float16") << "float16" << 1.5e-2;
    }
    void matchesTransformers()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(QString, dtype);
        QFETCH(double, tolerance);
        const auto dir = std::filesystem::path(BROOK_TEST_DATA_DIR) / "hf_tiny";
        auto config = loadModelConfig(dir / "config.json");
        auto checkpoint = Checkpoint::open(dir);
        auto expected = SafetensorsFile::open(dir / "expected.safetensors");
        QVERIFY(config.ok() && checkpoint.ok() && expected.ok());
        auto backend = makeCuda(*config, **checkpoint, dtype.toStdString(), false);
        const TensorView* ids = (*expected)->find("prompt_ids");
        const TensorView* greedyIds = (*expected)->find("greedy_ids");
        const TensorView* greedyLogits = (*expected)->find("greedy_logits");
        std::vector<int32_t> tokens(reinterpret_cast<const int32_t*>(ids->data),
                                    reinterpret_cast<const int32_t*>(ids->data) + ids->numElements());
        const auto* want = reinterpret_cast<const int32_t*>(greedyIds->data);
        std::vector<float> wantLogits(size_t(greedyLogits->numElements()));
        convertToFloat32(*greedyLogits, wantLogits.data());
        const int V = config->vocabSize;
        std::vector<int32_t> blocks = {5, 2, 7, 1};
        int cached = 0, clear = 0;
        double worst = 0;
        for (int step = 0; step < int(greedyIds->numElements()); ++step) {
            BatchSequence s{
                std::span(tokens.data() + cached, tokens.size() - size_t(cached)), cached, blocks, true, {}};
            const std::vector<float> got = backend->logits(std::span(&s, 1));
            const std::span<const float> ref(&wantLogits[size_t(step) * V], size_t(V));
            worst = std::max(worst, relativeError(got, std::vector<float>(ref.begin(), ref.end())));
            const Margin m = margin(ref);
            QCOMPARE(m.top, want[step]);
            if (m.gap > 0.5f) {
                ++clear;
                QCOMPARE(margin(got).top, want[step]);
            }
            cached = int(tokens.size());
            tokens.push_back(want[step]);  // teacher forcing: one near-tie cannot derail the rest
        }
        qInfo("%s: max relative logit error vs transformers %.3g; %d clear-margin steps agree", qPrintable(dtype),
              worst, clear);
        QVERIFY(worst < tolerance);
        QVERIFY(clear >= 20);
    }

    // Full ERNIE-0.3B shape against transformers (scripts/make_hf_full_reference.py, run on the GPU
    // machine; the folder is too large to commit): both backends, teacher-forced greedy steps.
    void matchesTransformersFullShape()
    {
        BROOK_REQUIRE_GPU();
        const char* dirEnv = std::getenv("BROOK_HF_FULL_REFERENCE");
        if (!dirEnv) QSKIP("BROOK_HF_FULL_REFERENCE is not set");
        const std::filesystem::path dir(dirEnv);
        auto config = loadModelConfig(dir / "config.json");
        auto checkpoint = Checkpoint::open(dir);
        auto expected = SafetensorsFile::open(dir / "expected.safetensors");
        QVERIFY(config.ok() && checkpoint.ok() && expected.ok());
        const TensorView* ids = (*expected)->find("prompt_ids");
        const TensorView* greedyIds = (*expected)->find("greedy_ids");
        const TensorView* greedyLogits = (*expected)->find("greedy_logits");
        std::vector<int32_t> prompt(reinterpret_cast<const int32_t*>(ids->data),
                                    reinterpret_cast<const int32_t*>(ids->data) + ids->numElements());
        const auto* want = reinterpret_cast<const int32_t*>(greedyIds->data);
        const int steps = int(greedyIds->numElements());
        std::vector<float> wantLogits(size_t(greedyLogits->numElements()));
        convertToFloat32(*greedyLogits, wantLogits.data());
        const int V = config->vocabSize;
        // The same steps in float64 (newer references): how far transformers' fp32 itself is off.
        const TensorView* logits64 = (*expected)->find("greedy_logits_f64");
        std::vector<float> wantLogits64(logits64 ? size_t(logits64->numElements()) : 0);
        if (logits64) convertToFloat32(*logits64, wantLogits64.data());
        // transformers' own fp32 rounding at this shape, measured against its float64 run: 1.4e-4
        // in top-3 logprobs on the H100 (docs/server.md, "Determinism"), so the 1e-4
        // against the fp32 logits is below the reference's own error. Two independent fp32
        // computations, each that far from the exact answer, differ by up to about twice it; the
        // exact mode may differ from transformers' fp32 by three times it (it measured 1.7x), or
        // 1e-4 when the reference has no float64 run.
        double referenceError = 0;
        for (int step = 0; logits64 && step < steps; ++step)
            referenceError = std::max(referenceError, testsupport::topLogprobError(
                                                          std::span(&wantLogits[size_t(step) * V], size_t(V)),
                                                          std::span(&wantLogits64[size_t(step) * V], size_t(V)), 3));
        if (logits64) qInfo("transformers fp32 vs its float64 run: top-3 logprob error %.3g", referenceError);
        const double exactLogprobBound = logits64 ? std::max(1e-4, 3 * referenceError) : 1e-4;
        // transformers' RoPE frequencies, bit for bit (engine/rope_frequencies.h).
        if (const TensorView* invFreq = (*expected)->find("rope_inv_freq")) {
            std::vector<float> theirs(size_t(invFreq->numElements()));
            convertToFloat32(*invFreq, theirs.data());
            QCOMPARE(ropeInverseFrequencies(config->ropeTheta, config->headDim), theirs);
        }

        // The CPU backend in its exact mode (--dtype float32: bf16 weights widened, fp32 everywhere;
        // transformers' arithmetic in another summation order): 1e-4 in relative logit error and
        // the bound above in top-3 logprobs, at every prefix (the reference's prompt is 960 tokens, so its steps
        // reach 1,024). And its default path, which rounds every Linear input to bf16 for
        // vdpbf16ps on AVX-512 BF16: test_cpu_backend_paths justifies 2e-2 for that (measured
        // 6.6e-3 over 18 layers on the H200 host). The CUDA backend: bf16 noise, 6e-2.
        struct Run {
            std::unique_ptr<Backend> backend;
            std::string name;
            double bound;
            double logprobBound;  // top-3; 0: not checked
        };
        std::vector<Run> runs;
        auto addCpu = [&](cpu::Bf16Arithmetic arithmetic, const char* name, double bound, double logprobBound) {
            cpu::CpuBackendOptions cpuOptions;
            cpuOptions.numKvBlocks = 80;
            cpuOptions.arithmetic = arithmetic;
            auto created = cpu::CpuBackend::create(*config, **checkpoint, cpuOptions);
            QVERIFY(created.ok());
            runs.push_back({std::move(created).value(), name, bound, logprobBound});
        };
        addCpu(cpu::Bf16Arithmetic::Fp32, "cpu (--dtype float32)", 1e-4, exactLogprobBound);
        addCpu(cpu::Bf16Arithmetic::RoundedActivations, "cpu (default)", 2e-2, 0);
        runs.push_back({makeCuda(*config, **checkpoint, "bfloat16", false), "cuda", 6e-2, 0});
        for (const Run& run : runs) {
            Backend* backend = run.backend.get();
            std::vector<int32_t> tokens = prompt;
            std::vector<int32_t> blocks(80);  // 1,280 slots
            for (int i = 0; i < 80; ++i) blocks[size_t(i)] = i;
            double worst = 0, worstLogprob = 0, worstLogprob64 = 0;
            int clear = 0, agree = 0;
            int cached = 0;
            for (int step = 0; step < steps; ++step) {
                BatchSequence s{
                    std::span(tokens.data() + cached, tokens.size() - size_t(cached)), cached, blocks, true, {}};
                const std::vector<float> got = backend->logits(std::span(&s, 1));
                const std::vector<float> ref(&wantLogits[size_t(step) * V], &wantLogits[size_t(step + 1) * V]);
                worst = std::max(worst, relativeError(got, ref));
                worstLogprob = std::max(worstLogprob, testsupport::topLogprobError(got, ref, 3));
                if (logits64) {
                    const std::span<const float> ref64(&wantLogits64[size_t(step) * V], size_t(V));
                    worstLogprob64 = std::max(worstLogprob64, testsupport::topLogprobError(got, ref64, 3));
                }
                if (margin(ref).gap > 0.5f) {
                    ++clear;
                    agree += margin(got).top == want[step] ? 1 : 0;
                }
                cached = int(tokens.size());
                tokens.push_back(want[step]);
            }
            qInfo("%s vs transformers, ERNIE-0.3B shape, prefixes %zu-%zu: max relative logit error %.3g, top-3 "
                  "logprob error %.3g; argmax agrees on %d of %d clear-margin steps",
                  run.name.c_str(), prompt.size(), prompt.size() + size_t(steps) - 1, worst, worstLogprob, agree, clear);
            if (logits64) qInfo("%s vs transformers in float64: top-3 logprob error %.3g", run.name.c_str(), worstLogprob64);
            QVERIFY2(worst < run.bound, run.name.c_str());
            if (run.logprobBound > 0) QVERIFY2(worstLogprob <= run.logprobBound, run.name.c_str());
            QCOMPARE(agree, clear);
            QVERIFY(clear >= steps / 2);
        }
    }

    void matchesCpuBackend_data()
    {
        QTest::addColumn<bool>("full");
        QTest::addColumn<bool>("eager");
        QTest::newRow("head_dim 128, graphs") << false << false;
        QTest::newRow("head_dim 128, eager") << false << true;
        QTest::newRow("ERNIE-0.3B shape") << true << false;
    }
    void matchesCpuBackend()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(bool, full);
        QFETCH(bool, eager);
        const auto model = openComparisonModel(full);
        const ModelConfig& config = model->config;
        const Checkpoint& checkpoint = *model->checkpoint;
        cpu::CpuBackendOptions cpuOptions;
        cpuOptions.numKvBlocks = 64;
        auto cpuBackend = cpu::CpuBackend::create(config, checkpoint, cpuOptions);
        QVERIFY(cpuBackend.ok());
        auto cudaBackend = makeCuda(config, checkpoint, "bfloat16", eager);
        std::mt19937 rng(21);
        const Comparison c =
            compare(*cudaBackend, **cpuBackend, testsupport::randomPrompt(rng, 40, 2000), full ? 16 : 64, 0.5f);
        qInfo("max relative logit error vs CPU %.3g; argmax agrees on %d of %d clear-margin steps", c.worst, c.agreeing,
              c.clearSteps);
        QVERIFY(c.worst < 6e-2);
        QVERIFY(c.clearSteps > 0);
        QCOMPARE(c.agreeing, c.clearSteps);
    }

    // CudaBackendOptions::features: with programmatic dependent launch, clusters and the work
    // before the PDL wait switched off, the skinny GEMV for one row only and cuBLASLt instead of
    // the fused GEMM (the 24-token prefill), the backend
    // computes the same logits (bf16 noise: the attention merge and the GEMM paths differ), and
    // the switches take effect. Fixed tokens, the two backends one after the other (the kernels
    // read the active set process-wide).
    void kernelFeaturesAreOptionsAndKeepTheLogits()
    {
        BROOK_REQUIRE_GPU();
        const auto model = openComparisonModel(false);
        const ModelConfig& config = model->config;
        const Checkpoint& checkpoint = *model->checkpoint;
        std::mt19937 rng(33);
        const std::vector<int32_t> tokens = testsupport::randomPrompt(rng, 56, 2000);
        constexpr int kPrompt = 24;  // a fused-GEMM prefill by default (up to 32 rows)
        const auto run = [&](const cuda::CudaFeatures& features) {
            auto backend = makeCuda(config, checkpoint, "bfloat16", false, {}, features);
            std::vector<int32_t> blocks(64);
            for (int i = 0; i < 64; ++i) blocks[size_t(i)] = i;
            std::vector<std::vector<float>> logits;
            for (int cached = 0, end = kPrompt; end <= int(tokens.size()); cached = end, ++end) {
                BatchSequence s{std::span(tokens.data() + cached, size_t(end - cached)), cached, blocks, true, {}};
                logits.push_back(backend->logits(std::span(&s, 1)));
            }
            return logits;
        };
        const auto defaults = run({});
        QCOMPARE(cuda::skinnyMaxRowsOverride(), 0);
        cuda::CudaFeatures off;
        off.programmaticDependentLaunch = false;
        off.threadBlockClusters = false;
        off.pdlEarlyWaitMask = 7;
        off.skinnyMaxRows = 1;
        off.pdlPrefillKernels = false;
        off.splitKvPrefill = false;
        off.prefillGraphs = false;
        off.padGemmRows = false;
        off.samplerClusterSize = 3;
        off.fusedGemm = false;
        const auto changed = run(off);
        // Every field reaches the kernels' process-wide set (a field left out of its packing read
        // as its default whatever was set).
        const cuda::CudaFeatures active = cuda::cudaFeatures();
        QCOMPARE(active.programmaticDependentLaunch, false);
        QCOMPARE(active.threadBlockClusters, false);
        QCOMPARE(active.pdlPrefillKernels, false);
        QCOMPARE(active.splitKvPrefill, false);
        QCOMPARE(active.prefillGraphs, false);
        QCOMPARE(active.padGemmRows, false);
        QCOMPARE(active.pdlEarlyWaitMask, 7);
        QCOMPARE(active.skinnyMaxRows, 1);
        QCOMPARE(active.samplerClusterSize, 3);
        QCOMPARE(active.fusedGemm, false);
        QCOMPARE(cuda::samplerClusterOverride(), 3);
        QVERIFY(!cuda::pdlPrefillKernels());
        QVERIFY(!cuda::pdlSupported());
        QVERIFY(!cuda::threadBlockClustersSupported());
        QCOMPARE(cuda::pdlEarlyWait(), 7);
        QCOMPARE(cuda::skinnyMaxRowsOverride(), 1);
        cuda::setCudaFeatures({});  // the defaults again for the tests after this one
        QCOMPARE(changed.size(), defaults.size());
        for (size_t step = 0; step < defaults.size(); ++step) {
            const double e = relativeError(changed[step], defaults[step]);
            QVERIFY2(e < 2e-2, qPrintable(QString("step %1: %2").arg(step).arg(e)));
        }
    }

    // Single-sequence prefill steps of 2..256 tokens replay a captured graph (ForwardGraphs): over a
    // cached history, at lengths inside, at and past a bucket's edge, the logits match the eager
    // backend's (bf16 noise: the graph's attention splits the keys for the longest context, the
    // eager launch for this step's) and the steps really replayed graphs. Past 256 tokens and
    // without sampling a step runs eagerly.
    void prefillGraphsMatchEagerSteps()
    {
        BROOK_REQUIRE_GPU();
        const auto model = openComparisonModel(false);
        const ModelConfig& config = model->config;
        const Checkpoint& checkpoint = *model->checkpoint;
        auto graphs = makeCuda(config, checkpoint, "bfloat16", false);
        auto eager = makeCuda(config, checkpoint, "bfloat16", true);
        QCOMPARE(eager->prefillGraphReplays(), int64_t(0));
        std::mt19937 rng(45);
        const std::vector<int32_t> tokens = testsupport::randomPrompt(rng, 1024, 2000);
        std::vector<int32_t> blocks(64);
        for (int i = 0; i < 64; ++i) blocks[size_t(i)] = 63 - i;
        // Chunk lengths: past the graphs (eager), then 2, a bucket's edge (16, 64) and one past it,
        // the last bucket (256) and inside buckets, each over the history before it.
        const std::vector<int> chunks = {300, 2, 16, 17, 64, 65, 83, 256, 5, 190};
        int cached = 0, expectedReplays = 0;
        for (int n : chunks) {
            QVERIFY(cached + n <= int(tokens.size()));
            BatchSequence s{std::span(tokens.data() + cached, size_t(n)), cached, blocks, true, {}};
            const std::vector<float> want = eager->logits(std::span(&s, 1));
            const std::vector<float> got = graphs->logits(std::span(&s, 1));
            const double e = relativeError(got, want);
            QVERIFY2(e < 2e-2, qPrintable(QString("%1 tokens over %2: relative error %3").arg(n).arg(cached).arg(e)));
            if (margin(want).gap > 1e-2f) QCOMPARE(margin(got).top, margin(want).top);
            expectedReplays += n <= cuda::kMaxPrefillGraphTokens ? 1 : 0;
            QCOMPARE(graphs->prefillGraphReplays(), int64_t(expectedReplays));
            cached += n;
        }
        // An unsampled chunk (the middle of a chunked prompt) is not a graph's shape.
        BatchSequence middle{std::span(tokens.data() + cached, 8), cached, blocks, false, {}};
        graphs->step(std::span(&middle, 1));
        QCOMPARE(graphs->prefillGraphReplays(), int64_t(expectedReplays));
    }

    // 4- and 8-bit Linears (RTN at load, group 128): the CUDA W4A16/W8A16 kernels against the
    // CPU backend, which keeps the very same codes and scales (its int8 kernels quantize the
    // activations per 32, cpu_gemm_q8.h). Prefill runs the quantized GEMM, decode the GEMV with
    // its fused prologues.
    void quantizedMatchesCpuBackend_data()
    {
        QTest::addColumn<bool>("full");
        QTest::addColumn<QString>("quantization");
        QTest::addColumn<bool>("eager");
        QTest::newRow("int4, graphs") << false << QString("int4") << false;
        QTest::newRow("int8, eager") << false << QString("int8") << true;
        QTest::newRow("ERNIE-0.3B shape, int4") << true << QString("int4") << false;
    }
    void quantizedMatchesCpuBackend()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(bool, full);
        QFETCH(QString, quantization);
        QFETCH(bool, eager);
        const auto model = openComparisonModel(full);
        const ModelConfig& config = model->config;
        const Checkpoint& checkpoint = *model->checkpoint;
        auto spec = resolveQuantization(config, quantization.toStdString());
        QVERIFY(spec.ok());
        cpu::CpuBackendOptions cpuOptions;
        cpuOptions.numKvBlocks = 64;
        cpuOptions.quantization = *spec;
        auto cpuBackend = cpu::CpuBackend::create(config, checkpoint, cpuOptions);
        QVERIFY(cpuBackend.ok());
        auto cudaBackend = makeCuda(config, checkpoint, "bfloat16", eager, quantization.toStdString());
        std::mt19937 rng(22);
        const Comparison c =
            compare(*cudaBackend, **cpuBackend, testsupport::randomPrompt(rng, 40, 2000), full ? 16 : 48, 0.5f);
        qInfo("%s: max relative logit error vs CPU %.3g; argmax agrees on %d of %d clear-margin steps",
              qPrintable(quantization), c.worst, c.agreeing, c.clearSteps);
        QVERIFY(c.worst < 6e-2);
        QVERIFY(c.clearSteps > 0);
        QCOMPARE(c.agreeing, c.clearSteps);
        // The weights really are smaller: 4-bit Linears take well under half the bf16 bytes.
        auto dense = makeCuda(config, checkpoint, "bfloat16", true);
        const double ratio = double(cudaBackend->memory().weightsBytes) / double(dense->memory().weightsBytes);
        qInfo("%s: weights %.1f MiB vs %.1f MiB bf16", qPrintable(quantization),
              cudaBackend->memory().weightsBytes / 1048576.0, dense->memory().weightsBytes / 1048576.0);
        QVERIFY(ratio < (quantization == "int4" ? 0.75 : 0.9));
    }

    void engineOnGpuIsBatchInvariantAndFreesBlocks()
    {
        BROOK_REQUIRE_GPU();
        auto engine = testsupport::launch(gpuEngineOptions());
        std::mt19937 rng(31);
        const int vocab = engine->tokenizer().vocabSize();
        const auto prompt = testsupport::randomPrompt(rng, 30, vocab);
        const auto alone = testsupport::complete(*engine, testsupport::greedyRequest(prompt, 48));
        std::vector<std::shared_ptr<RequestStream>> streams;
        for (int i = 0; i < 16; ++i)
            streams.push_back(*RequestStream::submit(
                *engine,
                testsupport::greedyRequest(i == 9 ? prompt : testsupport::randomPrompt(rng, 10 + 3 * i, vocab), 48)));
        std::vector<testsupport::Completion> results;
        for (auto& s : streams) results.push_back(testsupport::drain(*s));
        QCOMPARE(results[9].tokens, alone.tokens);
        // Cancel mid-flight.
        auto victim = *RequestStream::submit(*engine, testsupport::greedyRequest(prompt, 400));
        QVERIFY(victim->next().has_value());
        victim->cancel();
        QCOMPARE(*testsupport::drain(*victim).finish, FinishReason::Abort);
        const EngineStats stats = testsupport::waitIdle(*engine);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }

    void preemptionOnGpuKeepsGreedyOutput()
    {
        BROOK_REQUIRE_GPU();
        LaunchOptions o = gpuEngineOptions();
        std::mt19937 rng(41);
        std::vector<std::vector<int32_t>> prompts;
        std::vector<std::vector<int32_t>> expected;
        {
            auto engine = testsupport::launch(o);
            for (int i = 0; i < 6; ++i) prompts.push_back(testsupport::randomPrompt(rng, 20 + 7 * i, 2000));
            for (const auto& p : prompts)
                expected.push_back(testsupport::complete(*engine, testsupport::greedyRequest(p, 60)).tokens);
        }
        o.numKvBlocks = 12;
        auto engine = testsupport::launch(o);
        std::vector<std::shared_ptr<RequestStream>> streams;
        for (const auto& p : prompts)
            streams.push_back(*RequestStream::submit(*engine, testsupport::greedyRequest(p, 60)));
        for (size_t i = 0; i < streams.size(); ++i) QCOMPARE(testsupport::drain(*streams[i]).tokens, expected[i]);
        const EngineStats stats = testsupport::waitIdle(*engine);
        QVERIFY(stats.numPreemptions > 0);
        QCOMPARE(stats.numKvBlocksFree, stats.numKvBlocksTotal);
    }
};

QTEST_MAIN(TestCudaBackend)
#include "test_cuda_backend.moc"
