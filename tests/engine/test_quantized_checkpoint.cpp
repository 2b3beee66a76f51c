// Quantized weights end to end on the CPU backend. A random model (hidden 128, intermediate 256,
// 4 heads x 32, 2 KV heads, so q|k|v, o, gate|up and down all have K divisible by the group size
// 128 that --quantization int4|int8 uses) is written dense in fp32, and the test itself writes
// AWQ versions of it (toAwqGemm of quantizeRtn of each Linear, group 128, everything else copied,
// config.json with a quantization_config). Checks: an AWQ checkpoint gives the same logits as
// the dense one quantized at load (same RTN), near the dense logits but not equal, int8 nearer
// than int4; through launchEngine the same greedy tokens and logprobs; and the misuses
// (awq on a dense model, int8 on an AWQ one, bad tensors, unsupported configs) are clear errors.
#include "launch/engine_launcher.h"
#include "engine/awq_format.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/model_folder.h"
#include "engine/quantized_layer_loader.h"
#include "engine/quantized_weight.h"
#include "engine/safetensors_file.h"
#include "engine/safetensors_writer.h"
#include "engine_test_support.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <fstream>
#include <functional>
#include <random>

using namespace brook;
namespace fs = std::filesystem;

namespace {

constexpr int kGroup = 128;

testing::TestModelShape quantShape()
{
    testing::TestModelShape s = testing::TestModelShape::tiny();
    s.hiddenSize = 128;
    s.intermediateSize = 256;
    s.numHeads = 4;
    s.numKvHeads = 2;
    s.headDim = 32;
    return s;
}

bool isLinear(const std::string& name)
{
    return name.size() > 12 && name.compare(name.size() - 12, 12, "_proj.weight") == 0;
}

template <typename T>
std::vector<std::byte> bytesOf(const std::vector<T>& v)
{
    std::vector<std::byte> out(v.size() * sizeof(T));
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

using TensorEdit = std::function<void(SafetensorsWriter&)>;
using ConfigEdit = std::function<void(nlohmann::json&)>;

// An AWQ gemm copy of `dense`: every Linear quantized with RTN at `bits`, group 128.
Result<void> writeAwqModel(const fs::path& dense, const fs::path& out, int bits, const TensorEdit& editTensors = {},
                           const ConfigEdit& editConfig = {})
{
    fs::create_directories(out);
    for (const auto& entry : fs::directory_iterator(dense)) {
        const std::string file = entry.path().filename().string();
        if (file != "model.safetensors" && file != "config.json")
            fs::copy_file(entry.path(), out / file, fs::copy_options::overwrite_existing);
    }
    auto source = SafetensorsFile::open(dense / "model.safetensors");
    if (!source) return makeError(source.error());
    SafetensorsWriter writer;
    for (const auto& [name, t] : (*source)->tensors()) {
        if (!isLinear(name)) {
            writer.add(name, t.dtype, t.shape, std::vector<std::byte>(t.data, t.data + t.numBytes));
            continue;
        }
        const int N = int(t.shape[0]), K = int(t.shape[1]);
        std::vector<float> w(size_t(t.numElements()));
        convertToFloat32(t, w.data());
        auto q = quantizeRtn(w, N, K, bits, kGroup);
        if (!q) return makeError(name + ": " + q.error());
        const AwqTensors awq = toAwqGemm(*q);
        const std::string prefix = name.substr(0, name.size() - 7);  // drop ".weight"
        const int64_t words = int64_t(N) * bits / 32;
        writer.add(prefix + ".qweight", DType::I32, {K, words}, bytesOf(awq.qweight));
        writer.add(prefix + ".qzeros", DType::I32, {K / kGroup, words}, bytesOf(awq.qzeros));
        writer.add(prefix + ".scales", DType::F16, {K / kGroup, N}, bytesOf(awq.scales));
    }
    if (editTensors) editTensors(writer);
    if (auto ok = writer.write(out / "model.safetensors"); !ok) return ok;

    std::ifstream in(dense / "config.json");
    nlohmann::json config = nlohmann::json::parse(in);
    // AutoAWQ's own key spellings for 4 bits, its older aliases for 8, so both are read.
    if (bits == 4)
        config["quantization_config"] = {
            {"quant_method", "awq"}, {"bits", 4}, {"group_size", kGroup}, {"zero_point", true}, {"version", "gemm"}};
    else
        config["quantization_config"] = {
            {"quant_method", "awq"}, {"w_bit", 8}, {"q_group_size", kGroup}, {"zero_point", true}};
    if (editConfig) editConfig(config);
    std::ofstream(out / "config.json") << config.dump(2);
    return {};
}

LaunchOptions cpuOptions(const fs::path& dir, const std::string& quantization)
{
    LaunchOptions o;
    o.modelDir = dir;
    o.device = "cpu";
    o.quantization = quantization;
    o.maxModelLen = 256;
    o.maxNumSeqs = 4;
    o.maxNumBatchedTokens = 256;
    return o;
}

// ||a - b|| / ||b||
double relativeRms(const std::vector<float>& a, const std::vector<float>& b)
{
    double diff = 0, ref = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        diff += double(a[i] - b[i]) * double(a[i] - b[i]);
        ref += double(b[i]) * double(b[i]);
    }
    return std::sqrt(diff / ref);
}

std::string launchError(const fs::path& dir, const std::string& quantization)
{
    auto launched = launchEngine(cpuOptions(dir, quantization));
    return launched.ok() ? std::string() : launched.error();
}

}  // namespace

class TestQuantizedCheckpoint : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_root = m_tmp.path().toStdString();
        testing::TestModelOptions options;
        options.shape = quantShape();
        options.dtype = DType::F32;
        options.seed = 4242;
        auto dense = testing::writeTestModel(m_root / "dense", options);
        QVERIFY2(dense.ok(), dense.ok() ? "" : dense.error().c_str());
        for (int bits : {4, 8}) {
            auto awq = writeAwqModel(m_root / "dense", m_root / ("awq" + std::to_string(bits)), bits);
            QVERIFY2(awq.ok(), awq.ok() ? "" : awq.error().c_str());
        }
        std::mt19937 rng(17);
        auto config = loadModelConfig(m_root / "dense" / "config.json");
        QVERIFY(config.ok());
        m_vocab = config->vocabSize;
        m_prompts = {testsupport::randomPrompt(rng, 13, m_vocab), testsupport::randomPrompt(rng, 29, m_vocab)};
    }

    void awqMatchesQuantizingAtLoad()
    {
        const std::vector<float> awq4 = logits("awq4", ""), int4 = logits("dense", "int4");
        const std::vector<float> awq8 = logits("awq8", "awq"), int8 = logits("dense", "int8");
        QCOMPARE(awq4.size(), size_t(2 * m_vocab));
        QVERIFY2(testsupport::relativeError(awq4, int4) < 1e-5,
                 qPrintable(QString::number(testsupport::relativeError(awq4, int4))));
        QVERIFY2(testsupport::relativeError(awq8, int8) < 1e-5,
                 qPrintable(QString::number(testsupport::relativeError(awq8, int8))));
    }

    // Stated tolerances, in max |diff| / max |dense logit| over two prompts. This random model
    // has no structure for quantization to preserve (measured: int4 ~0.32, int8 ~0.018, about the
    // 255 / 15 ratio of their step sizes; int8 ~0.025 since the CPU's int8 path also quantizes
    // the activations per block of 32 and the embedding / head), so the bounds are int4 < 0.5,
    // int8 < 0.04; both must differ from dense (above 1e-4) and int8 must be at least 8x nearer.
    // The RMS error relative to the logits' RMS is bounded too (measured int4 ~0.28, int8 ~0.017,
    // ~0.024 since the change above: < 0.45 and < 0.03).
    void quantizedLogitsAreNearDense()
    {
        const std::vector<float> dense = logits("dense", ""), int4 = logits("awq4", ""), int8 = logits("awq8", "");
        const double e4 = testsupport::relativeError(int4, dense), e8 = testsupport::relativeError(int8, dense);
        const double r4 = relativeRms(int4, dense), r8 = relativeRms(int8, dense);
        qInfo("logit error vs dense: int4 max %.4g rms %.4g, int8 max %.4g rms %.4g", e4, r4, e8, r8);
        QVERIFY2(e4 < 0.5 && e4 > 1e-4, qPrintable(QString::number(e4)));
        QVERIFY2(e8 < 0.04 && e8 > 1e-4, qPrintable(QString::number(e8)));
        QVERIFY2(e8 * 8 < e4, qPrintable(QString("int8 %1, int4 %2").arg(e8).arg(e4)));
        QVERIFY2(r4 < 0.45 && r8 < 0.03 && r8 * 8 < r4, qPrintable(QString("int8 %1, int4 %2").arg(r8).arg(r4)));
    }

    // Through the engine: the AWQ checkpoint and the dense one with --quantization int4 generate
    // the same greedy tokens with the same logprobs.
    void launchEngineServesAwq()
    {
        const LaunchOptions awq = cpuOptions(m_root / "awq4", ""), rtn = cpuOptions(m_root / "dense", "int4");
        auto request = [&] {
            GenerationRequest r = testsupport::greedyRequest(m_prompts[1], 12);
            r.params.logprobs = 3;
            return r;
        };
        const testsupport::Completion a = testsupport::complete(*testsupport::launch(awq), request());
        const testsupport::Completion b = testsupport::complete(*testsupport::launch(rtn), request());
        QCOMPARE(a.tokens.size(), size_t(12));
        QCOMPARE(a.tokens, b.tokens);
        QCOMPARE(a.logprobs.size(), b.logprobs.size());
        for (size_t i = 0; i < a.logprobs.size(); ++i)
            QVERIFY(std::abs(a.logprobs[i].logprob - b.logprobs[i].logprob) <=
                    1e-5f * (1 + std::abs(b.logprobs[i].logprob)));
    }

    void misusesAreClearErrors()
    {
        const std::string awqOnDense = launchError(m_root / "dense", "awq");
        QVERIFY2(awqOnDense.find("--quantization awq") != std::string::npos &&
                     awqOnDense.find("quantization_config") != std::string::npos,
                 awqOnDense.c_str());
        const std::string int8OnAwq = launchError(m_root / "awq4", "int8");
        QVERIFY2(int8OnAwq.find("--quantization int8") != std::string::npos &&
                     int8OnAwq.find("awq 4-bit") != std::string::npos,
                 int8OnAwq.c_str());
        QVERIFY(!launchError(m_root / "dense", "int3").empty());
        QVERIFY(launchError(m_root / "awq4", "awq").empty());  // naming the checkpoint's own method is fine
    }

    void badAwqTensorsNameTheTensor()
    {
        const std::string tensor = "model.layers.1.mlp.down_proj.scales";
        const fs::path f32 = m_root / "bad_dtype";
        auto wrote = writeAwqModel(m_root / "dense", f32, 4, [&](SafetensorsWriter& w) {
            w.addFloat(tensor, DType::F32, {2, 128}, std::vector<float>(256, 0.01f));
        });
        QVERIFY(wrote.ok());
        std::string error = launchError(f32, "");
        QVERIFY2(error.find(tensor) != std::string::npos && error.find("F16") != std::string::npos, error.c_str());

        const fs::path shape = m_root / "bad_shape";
        wrote = writeAwqModel(m_root / "dense", shape, 4, [&](SafetensorsWriter& w) {
            w.add("model.layers.0.self_attn.k_proj.qweight", DType::I32, {64, 16}, std::vector<std::byte>(64 * 16 * 4));
        });
        QVERIFY(wrote.ok());
        error = launchError(shape, "");
        QVERIFY2(error.find("model.layers.0.self_attn.k_proj.qweight") != std::string::npos &&
                     error.find("[128, 8]") != std::string::npos,
                 error.c_str());
    }

    void unsupportedConfigsNameTheValue()
    {
        const std::pair<const char*, nlohmann::json> cases[] = {
            {"'gptq'", {{"quant_method", "gptq"}, {"bits", 4}}},
            {"'gemv'", {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"version", "gemv"}}},
            {"bits 3", {{"quant_method", "awq"}, {"bits", 3}, {"group_size", 128}}},
            {"group_size 96", {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 96}}},
        };
        int i = 0;
        for (const auto& [value, quantConfig] : cases) {
            const fs::path dir = m_root / ("bad_config" + std::to_string(i++));
            // A named copy: clang before 16 cannot capture a structured binding.
            const nlohmann::json& config = quantConfig;
            auto wrote = writeAwqModel(m_root / "dense", dir, 4, {},
                                       [&](nlohmann::json& c) { c["quantization_config"] = config; });
            QVERIFY(wrote.ok());
            const std::string error = launchError(dir, "");
            QVERIFY2(error.find("config.json") != std::string::npos && error.find(value) != std::string::npos,
                     error.c_str());
        }
    }

private:
    // Last-position logits [2, V] of the two prompts, batched, on a fresh CPU backend.
    std::vector<float> logits(const std::string& model, const std::string& quantization)
    {
        auto folder = ModelFolder::load(m_root / model);
        if (!folder) qFatal("%s", folder.error().c_str());
        auto spec = resolveQuantization(folder->config, quantization);
        if (!spec) qFatal("%s", spec.error().c_str());
        cpu::CpuBackendOptions options;
        options.numKvBlocks = 8;
        options.quantization = *spec;
        auto backend = cpu::CpuBackend::create(folder->config, *folder->checkpoint, options);
        if (!backend) qFatal("%s", backend.error().c_str());
        const std::vector<int32_t> blocksA = {0, 1}, blocksB = {2, 3, 4, 5};
        const BatchSequence batch[] = {{m_prompts[0], 0, blocksA, true, {}}, {m_prompts[1], 0, blocksB, true, {}}};
        return (*backend)->logits(batch);
    }

    QTemporaryDir m_tmp;
    fs::path m_root;
    int m_vocab = 0;
    std::vector<std::vector<int32_t>> m_prompts;
};

QTEST_APPLESS_MAIN(TestQuantizedCheckpoint)
#include "test_quantized_checkpoint.moc"
