// Tests for ModelFolder::load and writeTestModel: a folder from writeTestModel loads (dims,
// tokenizer, generation defaults, weight statistics at the documented scales, logits neither
// flat nor saturated), its weights are reproducible from the seed and identical whether sharded
// or not, and broken folders (no folder, no config.json, no tokenizer.model, no weights, a
// truncated safetensors, a bad config, a tokenizer larger than the vocab) each give a message
// naming the problem.
#include "engine/model_folder.h"
#include "testing/test_model_writer.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>
#include <set>

#ifndef _WIN32
#include <sys/stat.h>
#endif

using namespace brook;
using brook::testing::TestModelOptions;
using brook::testing::TestModelShape;

namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<float> toFloat(const TensorView& t)
{
    std::vector<float> v(static_cast<size_t>(t.numElements()));
    convertToFloat32(t, v.data());
    return v;
}

std::pair<double, double> meanStd(const std::vector<float>& v)
{
    double sum = 0, sq = 0;
    for (float x : v) sum += x;
    const double mean = sum / double(v.size());
    for (float x : v) sq += (x - mean) * (x - mean);
    return {mean, std::sqrt(sq / double(v.size()))};
}

std::string fileBytes(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

class TestModelFolder : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void goodFolderLoads();
    void weightsHaveDocumentedScales();
    void logitsAreNeitherFlatNorSaturated();
    void seedDeterminesWeights();
    void shardedEqualsSingleFile();
    void dtypesRoundFromTheSameValues();
    void lmHeadOptions();
    void shapesMatchErnie();
    void queryWidthOtherThanHidden();
    void missingFolder();
    void missingConfig();
    void missingTokenizerModel();
    void missingWeights();
    void truncatedSafetensors();
    void badConfig();
    void tokenizerLargerThanVocab();
    void malformedGenerationConfig();
    void vocabSmallerThanTokenizerIsRefused();
    void moreLayersThanTheCheckpointNamesTheField();
    void deepTokenizerConfigIsAnError();
    void fifosAreRefusedWithoutBlocking();

private:
    // A copy of the good folder to break.
    fs::path copyGood(const char* name)
    {
        const fs::path dir = fs::path(m_root.path().toStdString()) / name;
        fs::copy(m_good, dir, fs::copy_options::recursive);
        return dir;
    }
    Result<ModelFolder> load(const fs::path& dir) { return ModelFolder::load(dir); }

    QTemporaryDir m_root;
    fs::path m_good;
    TestModelOptions m_options;
};

void TestModelFolder::initTestCase()
{
    QVERIFY(m_root.isValid());
    m_good = fs::path(m_root.path().toStdString()) / "good";
    m_options.shape = TestModelShape::tiny();
    m_options.seed = 99;
    auto written = testing::writeTestModel(m_good, m_options);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
}

void TestModelFolder::goodFolderLoads()
{
    auto folder = load(m_good);
    QVERIFY2(folder.ok(), folder.ok() ? "" : folder.error().c_str());
    const ModelConfig& c = folder->config;
    const TestModelShape s = TestModelShape::tiny();
    QCOMPARE(c.architecture, std::string("Ernie4_5ForCausalLM"));
    QCOMPARE(c.modelType, std::string("ernie4_5"));
    QCOMPARE(c.hiddenSize, s.hiddenSize);
    QCOMPARE(c.intermediateSize, s.intermediateSize);
    QCOMPARE(c.numLayers, s.numLayers);
    QCOMPARE(c.numHeads, s.numHeads);
    QCOMPARE(c.numKvHeads, s.numKvHeads);
    QCOMPARE(c.headDim, s.headDim);
    QCOMPARE(c.ropeTheta, s.ropeTheta);
    QCOMPARE(c.tieWordEmbeddings, true);
    QCOMPARE(c.torchDtype, std::string("bfloat16"));
    QCOMPARE(c.bosTokenId, 1);
    QCOMPARE(c.eosTokenId, 2);
    // vocab 0 in the shape: the tokenizer's size rounded up to 64.
    const int tokens = folder->tokenizer->vocabSize();
    QVERIFY(tokens > m_options.tokenizerVocabSize);  // pieces plus ERNIE's added tokens
    QCOMPARE(c.vocabSize % 64, 0);
    QVERIFY(c.vocabSize >= tokens && c.vocabSize < tokens + 64);
    QCOMPARE(folder->checkpoint->lmHead(), folder->checkpoint->find("model.embed_tokens.weight"));
    QCOMPARE(folder->checkpoint->lmHead()->dtype, DType::BF16);
    QVERIFY(!fs::exists(m_good / "model.safetensors.index.json"));
    // ERNIE's generation_config.json values.
    const GenerationDefaults& g = folder->generationDefaults;
    QCOMPARE(*g.temperature, 0.8f);
    QCOMPARE(*g.topP, 0.8f);
    QCOMPARE(*g.doSample, true);
    QCOMPARE(*g.repetitionPenalty, 1.0f);
    QCOMPARE(g.eosTokenIds, (std::vector<int32_t>{2}));
    // config.json has the keys transformers writes.
    const auto config = nlohmann::json::parse(std::ifstream(m_good / "config.json"));
    for (const char* key : {"architectures", "model_type", "hidden_act", "rms_norm_eps", "rope_theta", "use_bias",
                            "tie_word_embeddings", "torch_dtype", "pad_token_id", "max_position_embeddings"})
        QVERIFY2(config.contains(key), key);
}

void TestModelFolder::weightsHaveDocumentedScales()
{
    auto folder = load(m_good);
    QVERIFY(folder.ok());
    const Checkpoint& ckpt = *folder->checkpoint;
    const double H = TestModelShape::tiny().hiddenSize, I = TestModelShape::tiny().intermediateSize;
    const struct {
        const char* name;
        double mean, stddev, tolerance;  // tolerance relative to stddev
    } cases[] = {
        {"model.embed_tokens.weight", 0.0, 3.0 / std::sqrt(H), 0.03},
        {"model.layers.0.self_attn.q_proj.weight", 0.0, 1.0 / std::sqrt(H), 0.05},
        {"model.layers.1.mlp.down_proj.weight", 0.0, 1.0 / std::sqrt(I), 0.05},
        {"model.layers.1.input_layernorm.weight", 1.0, 0.1, 0.35},
        {"model.norm.weight", 1.0, 0.1, 0.35},
    };
    for (const auto& c : cases) {
        const auto [mean, stddev] = meanStd(toFloat(*ckpt.find(c.name)));
        QVERIFY2(std::fabs(mean - c.mean) < 0.5 * c.stddev, c.name);
        QVERIFY2(std::fabs(stddev - c.stddev) < c.tolerance * c.stddev,
                 qPrintable(QStringLiteral("%1: std %2, expected %3").arg(c.name).arg(stddev).arg(c.stddev)));
    }
    // Layers are drawn independently: two q_proj tensors differ.
    QVERIFY(toFloat(*ckpt.find("model.layers.0.self_attn.q_proj.weight")) !=
            toFloat(*ckpt.find("model.layers.1.self_attn.q_proj.weight")));
}

void TestModelFolder::logitsAreNeitherFlatNorSaturated()
{
    // The final step of the forward pass: logits = (rmsnorm(x) * w_final) . E^T for a residual x.
    auto folder = load(m_good);
    QVERIFY(folder.ok());
    const Checkpoint& ckpt = *folder->checkpoint;
    const int H = folder->config.hiddenSize, V = folder->config.vocabSize;
    const auto E = toFloat(*ckpt.lmHead());
    const auto w = toFloat(*ckpt.find("model.norm.weight"));
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (int trial = 0; trial < 5; ++trial) {
        std::vector<float> x(size_t(H), 0.0f);
        double ms = 0;
        for (float& v : x) {
            v = normal(rng);
            ms += double(v) * v / H;
        }
        std::vector<double> logits(static_cast<size_t>(V));
        for (int j = 0; j < V; ++j) {
            double dot = 0;
            for (int k = 0; k < H; ++k)
                dot += x[size_t(k)] / std::sqrt(ms + 1e-5) * w[size_t(k)] * E[size_t(j) * H + k];
            logits[size_t(j)] = dot;
        }
        double mean = 0, sq = 0, maxLogit = -1e30;
        for (double l : logits) mean += l / V, maxLogit = std::max(maxLogit, l);
        for (double l : logits) sq += (l - mean) * (l - mean) / V;
        const double stddev = std::sqrt(sq);
        double z = 0;
        for (double l : logits) z += std::exp(l - maxLogit);
        const double topProbability = 1.0 / z;
        QVERIFY2(stddev > 2.0 && stddev < 4.0, qPrintable(QString::number(stddev)));
        QVERIFY2(topProbability > 0.02 && topProbability < 0.9, qPrintable(QString::number(topProbability)));
    }
}

void TestModelFolder::seedDeterminesWeights()
{
    const fs::path again = fs::path(m_root.path().toStdString()) / "again";
    const fs::path other = fs::path(m_root.path().toStdString()) / "other";
    QVERIFY(testing::writeTestModel(again, m_options).ok());
    TestModelOptions otherSeed = m_options;
    otherSeed.seed = 100;
    QVERIFY(testing::writeTestModel(other, otherSeed).ok());
    QVERIFY(fileBytes(again / "model.safetensors") == fileBytes(m_good / "model.safetensors"));
    QVERIFY(fileBytes(other / "model.safetensors") != fileBytes(m_good / "model.safetensors"));
    QCOMPARE(fs::file_size(other / "model.safetensors"), fs::file_size(m_good / "model.safetensors"));
}

void TestModelFolder::shardedEqualsSingleFile()
{
    const fs::path sharded = fs::path(m_root.path().toStdString()) / "sharded";
    TestModelOptions o = m_options;
    o.shardWeights = true;
    QVERIFY(testing::writeTestModel(sharded, o).ok());
    QVERIFY(!fs::exists(sharded / "model.safetensors"));
    QVERIFY(fs::exists(sharded / "model-00001-of-00002.safetensors"));
    QVERIFY(fs::exists(sharded / "model-00002-of-00002.safetensors"));
    auto a = load(sharded);
    auto b = load(m_good);
    QVERIFY2(a.ok(), a.ok() ? "" : a.error().c_str());
    QVERIFY(b.ok());
    const auto index = nlohmann::json::parse(std::ifstream(sharded / "model.safetensors.index.json"));
    QCOMPARE(index["metadata"]["total_size"].get<size_t>(), a->checkpoint->totalBytes());
    QCOMPARE(a->checkpoint->totalBytes(), b->checkpoint->totalBytes());
    std::set<std::string> files;
    for (const auto& [name, shard] : index["weight_map"].items()) {
        const TensorView* x = a->checkpoint->find(name);
        const TensorView* y = b->checkpoint->find(name);
        QVERIFY2(x && y, name.c_str());
        QCOMPARE(x->file, shard.get<std::string>());
        QVERIFY2(std::equal(x->data, x->data + x->numBytes, y->data, y->data + y->numBytes), name.c_str());
        files.insert(x->file);
    }
    QCOMPARE(files.size(), size_t(2));
    QCOMPARE(index["weight_map"].size(), size_t(2 + 9 * TestModelShape::tiny().numLayers));
}

void TestModelFolder::dtypesRoundFromTheSameValues()
{
    std::map<DType, std::vector<float>> embeddings;
    for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
        const fs::path dir = fs::path(m_root.path().toStdString()) / (std::string("dtype_") + dtypeName(dtype));
        TestModelOptions o = m_options;
        o.dtype = dtype;
        QVERIFY(testing::writeTestModel(dir, o).ok());
        auto folder = load(dir);
        QVERIFY2(folder.ok(), folder.ok() ? "" : folder.error().c_str());
        const TensorView* e = folder->checkpoint->find("model.embed_tokens.weight");
        QCOMPARE(e->dtype, dtype);
        embeddings[dtype] = toFloat(*e);
    }
    const auto& f32 = embeddings[DType::F32];
    for (size_t i = 0; i < f32.size(); ++i) {
        QCOMPARE(embeddings[DType::BF16][i], bf16ToFloat(floatToBf16(f32[i])));
        QCOMPARE(embeddings[DType::F16][i], fp16ToFloat(floatToFp16(f32[i])));
    }
}

void TestModelFolder::lmHeadOptions()
{
    const fs::path tied = fs::path(m_root.path().toStdString()) / "tied_head";
    TestModelOptions o = m_options;
    o.writeLmHead = true;
    QVERIFY(testing::writeTestModel(tied, o).ok());
    auto a = load(tied);
    QVERIFY(a.ok());
    const TensorView* head = a->checkpoint->find("lm_head.weight");
    const TensorView* embed = a->checkpoint->find("model.embed_tokens.weight");
    QVERIFY(head && a->checkpoint->lmHead() == head);
    QVERIFY(std::equal(head->data, head->data + head->numBytes, embed->data, embed->data + embed->numBytes));

    const fs::path untied = fs::path(m_root.path().toStdString()) / "untied";
    o.writeLmHead = false;
    o.tieWordEmbeddings = false;
    QVERIFY(testing::writeTestModel(untied, o).ok());
    auto b = load(untied);
    QVERIFY2(b.ok(), b.ok() ? "" : b.error().c_str());
    QCOMPARE(b->config.tieWordEmbeddings, false);
    QVERIFY(toFloat(*b->checkpoint->lmHead()) != toFloat(*b->checkpoint->find("model.embed_tokens.weight")));
}

void TestModelFolder::shapesMatchErnie()
{
    const TestModelShape s = TestModelShape::ernie03b();
    QCOMPARE(s.vocabSize, 103424);
    QCOMPARE(s.hiddenSize, 1024);
    QCOMPARE(s.intermediateSize, 3072);
    QCOMPARE(s.numLayers, 18);
    QCOMPARE(s.numHeads, 16);
    QCOMPARE(s.numKvHeads, 2);
    QCOMPARE(s.headDim, 128);
    QCOMPARE(s.maxPositionEmbeddings, 131072);
    QCOMPARE(s.ropeTheta, 500000.0);
    QCOMPARE(TestModelShape::tiny().vocabSize, 0);
}

void TestModelFolder::queryWidthOtherThanHidden()
{
    // As in ERNIE (q width 2048, hidden 1024): tiny's q width equals its hidden size, hiding transpositions.
    TestModelOptions o = m_options;
    o.shape.headDim = 32;
    o.shape.numLayers = 1;
    o.shape.intermediateSize = 96;
    const fs::path dir = fs::path(m_root.path().toStdString()) / "wide_q";
    QVERIFY(testing::writeTestModel(dir, o).ok());
    auto folder = load(dir);
    QVERIFY2(folder.ok(), folder.ok() ? "" : folder.error().c_str());
    QCOMPARE(folder->config.qDim(), 128);
    QCOMPARE(folder->checkpoint->find("model.layers.0.self_attn.q_proj.weight")->shape,
             (std::vector<int64_t>{128, 64}));
    QCOMPARE(folder->checkpoint->find("model.layers.0.self_attn.o_proj.weight")->shape,
             (std::vector<int64_t>{64, 128}));
    QCOMPARE(folder->checkpoint->find("model.layers.0.self_attn.k_proj.weight")->shape, (std::vector<int64_t>{64, 64}));
    QCOMPARE(folder->checkpoint->find("model.layers.0.mlp.down_proj.weight")->shape, (std::vector<int64_t>{64, 96}));
}

void TestModelFolder::missingFolder()
{
    const fs::path nowhere = fs::path(m_root.path().toStdString()) / "no-such-model";
    auto r = load(nowhere);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "no-such-model") && contains(r.error(), "does not exist"), r.error().c_str());
    auto file = load(m_good / "config.json");
    QVERIFY(!file.ok());
    QVERIFY2(contains(file.error(), "not a folder"), file.error().c_str());
}

void TestModelFolder::missingConfig()
{
    const fs::path dir = copyGood("no_config");
    fs::remove(dir / "config.json");
    auto r = load(dir);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "config.json is missing"), r.error().c_str());
}

void TestModelFolder::missingTokenizerModel()
{
    const fs::path dir = copyGood("no_tokenizer");
    fs::remove(dir / "tokenizer.model");
    auto r = load(dir);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "tokenizer.model"), r.error().c_str());
}

void TestModelFolder::missingWeights()
{
    const fs::path dir = copyGood("no_weights");
    fs::remove(dir / "model.safetensors");
    auto r = load(dir);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "model.safetensors") && contains(r.error(), "no weights"), r.error().c_str());
}

void TestModelFolder::truncatedSafetensors()
{
    const fs::path dir = copyGood("truncated");
    const auto size = fs::file_size(dir / "model.safetensors");
    fs::resize_file(dir / "model.safetensors", size / 2);
    auto r = load(dir);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "model.safetensors") && contains(r.error(), "truncated") &&
                 contains(r.error(), "tensor 'model."),
             r.error().c_str());
}

void TestModelFolder::badConfig()
{
    const fs::path dir = copyGood("bad_config");
    auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    config["architectures"] = {"Qwen2ForCausalLM"};
    std::ofstream(dir / "config.json") << config.dump();
    auto r = load(dir);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "config.json") && contains(r.error(), "Qwen2ForCausalLM"), r.error().c_str());

    // A config whose dimensions disagree with the weights: the tensor is named.
    config["architectures"] = {"Ernie4_5_ForCausalLM"};
    config["intermediate_size"] = config["intermediate_size"].get<int>() + 64;
    std::ofstream(dir / "config.json") << config.dump();
    auto mismatch = load(dir);
    QVERIFY(!mismatch.ok());
    QVERIFY2(contains(mismatch.error(), "'model.layers.0.mlp.gate_proj.weight' has shape"), mismatch.error().c_str());
}

void TestModelFolder::tokenizerLargerThanVocab()
{
    const fs::path dir = copyGood("small_vocab");
    auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    config["vocab_size"] = 1000;
    std::ofstream(dir / "config.json") << config.dump();
    auto r = load(dir);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "tokenizer") && contains(r.error(), "vocab_size 1000"), r.error().c_str());
}

void TestModelFolder::malformedGenerationConfig()
{
    const fs::path dir = copyGood("bad_generation");
    std::ofstream(dir / "generation_config.json") << "{\"temperature\": \"warm\"}";
    auto r = load(dir);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "generation_config.json") && contains(r.error(), "'temperature'"), r.error().c_str());
    fs::remove(dir / "generation_config.json");  // optional: without it the folder loads
    auto ok = load(dir);
    QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().c_str());
    QCOMPARE(ok->generationDefaults.eosTokenIds, (std::vector<int32_t>{2}));  // from config.json
    QVERIFY(!ok->generationDefaults.temperature.has_value());
}

void TestModelFolder::vocabSmallerThanTokenizerIsRefused()
{
    TestModelOptions o = m_options;
    o.shape.vocabSize = 64;
    auto r = testing::writeTestModel(fs::path(m_root.path().toStdString()) / "tiny_vocab", o);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "smaller than the tokenizer"), r.error().c_str());
}

void TestModelFolder::moreLayersThanTheCheckpointNamesTheField()
{
    const fs::path dir = copyGood("many_layers");
    auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    // 100,000,000 layers used to build a 6 GB expected layout before any tensor was compared.
    config["num_hidden_layers"] = 100000000;
    std::ofstream(dir / "config.json") << config.dump();
    auto huge = load(dir);
    QVERIFY(!huge.ok());
    QVERIFY2(contains(huge.error(), "config.json: key 'num_hidden_layers' 100000000 is larger than"),
             huge.error().c_str());
    // Within the limit but more than the weights hold: counted against the checkpoint first.
    config["num_hidden_layers"] = 1000;
    std::ofstream(dir / "config.json") << config.dump();
    auto more = load(dir);
    QVERIFY(!more.ok());
    QVERIFY2(contains(more.error(), "config.json: num_hidden_layers 1000, but the checkpoint holds 2 layer(s)"),
             more.error().c_str());
}

void TestModelFolder::deepTokenizerConfigIsAnError()
{
    const fs::path dir = copyGood("deep_tokenizer_config");
    std::string text = fileBytes(dir / "tokenizer_config.json");
    const int depth = 100000;
    text.insert(text.find('{') + 1, "\"deep\": " + std::string(depth, '[') + std::string(depth, ']') + ", ");
    std::ofstream(dir / "tokenizer_config.json", std::ios::binary | std::ios::trunc) << text;
    auto r = load(dir);
    QVERIFY(!r.ok());
    QVERIFY2(contains(r.error(), "tokenizer_config.json: JSON nested deeper than"), r.error().c_str());
}

void TestModelFolder::fifosAreRefusedWithoutBlocking()
{
#ifdef _WIN32
    QSKIP("no FIFOs in the Windows file system");
#else
    // Each file replaced by a FIFO without a writer: a plain open() or read() would hang here.
    for (const char* name : {"config.json", "generation_config.json", "tokenizer.model", "tokenizer_config.json",
                             "special_tokens_map.json", "added_tokens.json", "model.safetensors"}) {
        const fs::path dir = copyGood((std::string("fifo_") + name).c_str());
        fs::remove(dir / name);
        QCOMPARE(::mkfifo((dir / name).c_str(), 0600), 0);
        auto r = load(dir);
        QVERIFY2(!r.ok(), name);
        QVERIFY2(contains(r.error(), (dir / name).string() + ": not a regular file"), r.error().c_str());
    }
#endif
}

QTEST_APPLESS_MAIN(TestModelFolder)
#include "test_model_folder.moc"
