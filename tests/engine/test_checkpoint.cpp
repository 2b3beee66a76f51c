// Tests for Checkpoint: single-file and sharded checkpoints (values read back through the
// mapping), missing shards, index entries that lie, no weights at all, and validate's
// errors for wrong shapes, missing tensors, non-float dtypes and the tied / untied lm_head rule.
// The expected ERNIE layout is written out here from docs/model-ernie-4.5.md, independently of the
// loader's own table.
#include "engine/checkpoint.h"
#include "engine/safetensors_writer.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <set>

using namespace brook;

namespace {

using Shape = std::vector<int64_t>;

ModelConfig smallConfig()
{
    ModelConfig c;
    c.architecture = "Ernie4_5ForCausalLM";
    c.vocabSize = 96;
    c.hiddenSize = 32;
    c.intermediateSize = 48;
    c.numLayers = 3;
    c.numHeads = 4;
    c.numKvHeads = 2;
    c.headDim = 16;  // q width 64 != hidden 32, as ERNIE's 2048 != 1024; kv width 32
    c.maxPositionEmbeddings = 256;
    return c;
}

std::vector<std::pair<std::string, Shape>> ernieTensors(const ModelConfig& c, bool withLmHead)
{
    const int64_t V = c.vocabSize, H = c.hiddenSize, I = c.intermediateSize;
    const int64_t Q = int64_t(c.numHeads) * c.headDim, KV = int64_t(c.numKvHeads) * c.headDim;
    std::vector<std::pair<std::string, Shape>> t = {{"model.embed_tokens.weight", {V, H}}, {"model.norm.weight", {H}}};
    for (int i = 0; i < c.numLayers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        t.push_back({p + "input_layernorm.weight", {H}});
        t.push_back({p + "self_attn.q_proj.weight", {Q, H}});
        t.push_back({p + "self_attn.k_proj.weight", {KV, H}});
        t.push_back({p + "self_attn.v_proj.weight", {KV, H}});
        t.push_back({p + "self_attn.o_proj.weight", {H, Q}});
        t.push_back({p + "post_attention_layernorm.weight", {H}});
        t.push_back({p + "mlp.gate_proj.weight", {I, H}});
        t.push_back({p + "mlp.up_proj.weight", {I, H}});
        t.push_back({p + "mlp.down_proj.weight", {H, I}});
    }
    if (withLmHead) t.push_back({"lm_head.weight", {V, H}});
    return t;
}

struct WriteOptions {
    bool lmHead = false;
    std::set<std::string> skip;
    std::map<std::string, Shape> shapeOverride;
    std::map<std::string, DType> dtypeOverride;
    std::vector<std::pair<std::string, Shape>> extra;
    int shards = 1;  // > 1: random assignment to shards plus an index
};

// Writes the checkpoint; returns the fp32 values each tensor should read back as.
std::map<std::string, std::vector<float>> writeCheckpoint(const QString& dir, const ModelConfig& c,
                                                          const WriteOptions& o, std::mt19937& rng,
                                                          std::map<std::string, int>* shardOf = nullptr)
{
    std::normal_distribution<float> normal(0.0f, 0.5f);
    std::vector<SafetensorsWriter> writers(size_t(o.shards));
    std::map<std::string, std::vector<float>> expected;
    nlohmann::json weightMap = nlohmann::json::object();
    auto tensors = ernieTensors(c, o.lmHead);
    tensors.insert(tensors.end(), o.extra.begin(), o.extra.end());
    for (auto [name, shape] : tensors) {
        if (o.skip.count(name)) continue;
        if (o.shapeOverride.count(name)) shape = o.shapeOverride.at(name);
        const DType dtype = o.dtypeOverride.count(name) ? o.dtypeOverride.at(name) : DType::BF16;
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        std::vector<float> values(static_cast<size_t>(n));
        for (float& v : values) v = bf16ToFloat(floatToBf16(normal(rng)));  // exactly representable
        const int shard = int(rng() % unsigned(o.shards));
        if (dtype == DType::I32) writers[size_t(shard)].add(name, dtype, shape, std::vector<std::byte>(size_t(n) * 4));
        else writers[size_t(shard)].addFloat(name, dtype, shape, values);
        expected[name] = values;
        if (shardOf) (*shardOf)[name] = shard;
        weightMap[name] =
            "model-0000" + std::to_string(shard + 1) + "-of-0000" + std::to_string(o.shards) + ".safetensors";
    }
    if (o.shards == 1) {
        if (!writers[0].write((dir + "/model.safetensors").toStdString()).ok()) qFatal("write failed");
        return expected;
    }
    for (int s = 0; s < o.shards; ++s) {
        const std::string file =
            "model-0000" + std::to_string(s + 1) + "-of-0000" + std::to_string(o.shards) + ".safetensors";
        if (!writers[size_t(s)].write((dir.toStdString() + "/" + file)).ok()) qFatal("write failed");
    }
    std::ofstream((dir + "/model.safetensors.index.json").toStdString())
        << nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", weightMap}}.dump(2);
    return expected;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT

private slots:
    void opensSingleFileAndReadsValues();
    void opensShardsFromIndex();
    void missingShardNamesIt();
    void indexEntryAbsentFromShardNamesTensor();
    void badIndexNamesFile();
    void noWeightsListsWhatWasLookedFor();
    void wrongShapeNamesTensorAndShapes();
    void missingTensorNamesIt();
    void nonFloatDtypeNamesTensor();
    void tiedHeadIsOptional();
    void untiedRequiresHead();
    void extraTensorsAreIgnored();
    void duplicateTensorAcrossShardsIsAnError();
};

void TestCheckpoint::opensSingleFileAndReadsValues()
{
    QTemporaryDir dir;
    std::mt19937 rng(1);
    const ModelConfig c = smallConfig();
    const auto expected = writeCheckpoint(dir.path(), c, {}, rng);
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY2(ckpt.ok(), ckpt.ok() ? "" : ckpt.error().c_str());
    auto valid = (*ckpt)->validate(c);
    QVERIFY2(valid.ok(), valid.ok() ? "" : valid.error().c_str());
    size_t bytes = 0;
    for (const auto& [name, values] : expected) {
        auto t = (*ckpt)->require(name);
        QVERIFY2(t.ok(), name.c_str());
        QCOMPARE((*t)->file, std::string("model.safetensors"));
        std::vector<float> back(values.size());
        convertToFloat32(**t, back.data());
        QCOMPARE(back, values);
        bytes += (*t)->numBytes;
    }
    QCOMPARE((*ckpt)->totalBytes(), bytes);
    QCOMPARE((*ckpt)->lmHead(), (*ckpt)->find("model.embed_tokens.weight"));
    auto absent = (*ckpt)->require("model.layers.9.mlp.up_proj.weight");
    QVERIFY(!absent.ok());
    QVERIFY2(contains(absent.error(), "'model.layers.9.mlp.up_proj.weight'"), absent.error().c_str());
}

void TestCheckpoint::opensShardsFromIndex()
{
    QTemporaryDir dir;
    std::mt19937 rng(2);
    const ModelConfig c = smallConfig();
    std::map<std::string, int> shardOf;
    WriteOptions o;
    o.shards = 3;
    const auto expected = writeCheckpoint(dir.path(), c, o, rng, &shardOf);
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY2(ckpt.ok(), ckpt.ok() ? "" : ckpt.error().c_str());
    QVERIFY((*ckpt)->validate(c).ok());
    std::set<int> used;
    for (const auto& [name, values] : expected) {
        const TensorView* t = (*ckpt)->find(name);
        QVERIFY(t);
        QCOMPARE(t->file, "model-0000" + std::to_string(shardOf[name] + 1) + "-of-00003.safetensors");
        std::vector<float> back(values.size());
        convertToFloat32(*t, back.data());
        QCOMPARE(back, values);
        used.insert(shardOf[name]);
    }
    QCOMPARE(used.size(), size_t(3));  // the random assignment really spread the tensors
}

void TestCheckpoint::missingShardNamesIt()
{
    QTemporaryDir dir;
    std::mt19937 rng(3);
    WriteOptions o;
    o.shards = 2;
    writeCheckpoint(dir.path(), smallConfig(), o, rng);
    QVERIFY(QFile::remove(dir.filePath("model-00002-of-00002.safetensors")));
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY(!ckpt.ok());
    QVERIFY2(contains(ckpt.error(), "'model-00002-of-00002.safetensors' is missing"), ckpt.error().c_str());
}

void TestCheckpoint::indexEntryAbsentFromShardNamesTensor()
{
    QTemporaryDir dir;
    std::mt19937 rng(4);
    WriteOptions o;
    o.shards = 2;
    std::map<std::string, int> shardOf;
    writeCheckpoint(dir.path(), smallConfig(), o, rng, &shardOf);
    const std::string indexPath = dir.filePath("model.safetensors.index.json").toStdString();
    nlohmann::json index = nlohmann::json::parse(std::ifstream(indexPath));
    // Point one tensor at the other shard, and list one that exists nowhere.
    const std::string moved = "model.layers.1.mlp.down_proj.weight";
    index["weight_map"][moved] =
        shardOf[moved] == 0 ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
    std::ofstream(indexPath) << index.dump();
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY(!ckpt.ok());
    QVERIFY2(contains(ckpt.error(), "'" + moved + "'") && contains(ckpt.error(), "does not contain"),
             ckpt.error().c_str());

    index["weight_map"][moved] =
        shardOf[moved] == 0 ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
    index["weight_map"]["model.ghost.weight"] = "model-00001-of-00002.safetensors";
    std::ofstream(indexPath) << index.dump();
    auto ghost = Checkpoint::open(dir.path().toStdString());
    QVERIFY(!ghost.ok());
    QVERIFY2(contains(ghost.error(), "'model.ghost.weight'"), ghost.error().c_str());
}

void TestCheckpoint::badIndexNamesFile()
{
    for (const char* text : {"{\"weight_map\": ", "{\"metadata\": {}}", "{\"weight_map\": {\"a\": 3}}",
                             "{\"weight_map\": {\"a\": \"../outside.safetensors\"}}"}) {
        QTemporaryDir dir;
        std::ofstream(dir.filePath("model.safetensors.index.json").toStdString()) << text;
        auto ckpt = Checkpoint::open(dir.path().toStdString());
        QVERIFY2(!ckpt.ok(), text);
        QVERIFY2(contains(ckpt.error(), "model.safetensors.index.json"), ckpt.error().c_str());
    }
}

void TestCheckpoint::noWeightsListsWhatWasLookedFor()
{
    QTemporaryDir dir;
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY(!ckpt.ok());
    QVERIFY2(contains(ckpt.error(), "model.safetensors") && contains(ckpt.error(), "model.safetensors.index.json"),
             ckpt.error().c_str());
    auto nowhere = Checkpoint::open(dir.filePath("does-not-exist").toStdString());
    QVERIFY(!nowhere.ok());
    QVERIFY2(contains(nowhere.error(), "does-not-exist"), nowhere.error().c_str());
}

void TestCheckpoint::wrongShapeNamesTensorAndShapes()
{
    QTemporaryDir dir;
    std::mt19937 rng(5);
    WriteOptions o;
    o.shapeOverride["model.layers.1.self_attn.k_proj.weight"] = {8, 32};
    writeCheckpoint(dir.path(), smallConfig(), o, rng);
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY(ckpt.ok());
    auto valid = (*ckpt)->validate(smallConfig());
    QVERIFY(!valid.ok());
    QCOMPARE(valid.error(),
             std::string("model.safetensors: tensor 'model.layers.1.self_attn.k_proj.weight' has shape [8, 32], "
                         "expected [32, 32]"));
    // The same checkpoint against a config with twice the KV heads: every k_proj is wrong, layer 0 first.
    ModelConfig moreHeads = smallConfig();
    moreHeads.numKvHeads = 4;
    auto again = (*ckpt)->validate(moreHeads);
    QVERIFY(!again.ok());
    QVERIFY2(contains(again.error(), "'model.layers.0.self_attn.k_proj.weight' has shape [32, 32], expected [64, 32]"),
             again.error().c_str());
    // A transposed o_proj is caught too ([H, NH*HD], not [NH*HD, H]).
    QTemporaryDir transposed;
    WriteOptions t;
    t.shapeOverride["model.layers.2.self_attn.o_proj.weight"] = {64, 32};
    writeCheckpoint(transposed.path(), smallConfig(), t, rng);
    auto tc = Checkpoint::open(transposed.path().toStdString());
    QVERIFY(tc.ok());
    auto tv = (*tc)->validate(smallConfig());
    QVERIFY(!tv.ok());
    QVERIFY2(contains(tv.error(), "'model.layers.2.self_attn.o_proj.weight' has shape [64, 32], expected [32, 64]"),
             tv.error().c_str());
}

void TestCheckpoint::missingTensorNamesIt()
{
    std::mt19937 rng(6);
    const auto all = ernieTensors(smallConfig(), false);
    for (int trial = 0; trial < 8; ++trial) {
        QTemporaryDir dir;
        const std::string victim = all[rng() % all.size()].first;
        WriteOptions o;
        o.skip = {victim};
        writeCheckpoint(dir.path(), smallConfig(), o, rng);
        auto ckpt = Checkpoint::open(dir.path().toStdString());
        QVERIFY(ckpt.ok());
        auto valid = (*ckpt)->validate(smallConfig());
        QVERIFY2(!valid.ok(), victim.c_str());
        QVERIFY2(contains(valid.error(), "'" + victim + "' is missing"), valid.error().c_str());
    }
}

void TestCheckpoint::nonFloatDtypeNamesTensor()
{
    QTemporaryDir dir;
    std::mt19937 rng(7);
    WriteOptions o;
    o.dtypeOverride["model.layers.2.post_attention_layernorm.weight"] = DType::I32;
    o.dtypeOverride["model.layers.0.mlp.up_proj.weight"] = DType::F16;  // mixed float dtypes are fine
    o.dtypeOverride["model.norm.weight"] = DType::F32;
    writeCheckpoint(dir.path(), smallConfig(), o, rng);
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY(ckpt.ok());
    auto valid = (*ckpt)->validate(smallConfig());
    QVERIFY(!valid.ok());
    QVERIFY2(contains(valid.error(), "'model.layers.2.post_attention_layernorm.weight' has dtype I32"),
             valid.error().c_str());
}

void TestCheckpoint::tiedHeadIsOptional()
{
    std::mt19937 rng(8);
    QTemporaryDir withHead;
    WriteOptions o;
    o.lmHead = true;
    writeCheckpoint(withHead.path(), smallConfig(), o, rng);
    auto ckpt = Checkpoint::open(withHead.path().toStdString());
    QVERIFY(ckpt.ok() && (*ckpt)->validate(smallConfig()).ok());
    QCOMPARE((*ckpt)->lmHead(), (*ckpt)->find("lm_head.weight"));
    QVERIFY((*ckpt)->lmHead() != (*ckpt)->find("model.embed_tokens.weight"));

    QTemporaryDir badHead;
    o.shapeOverride["lm_head.weight"] = {95, 32};
    writeCheckpoint(badHead.path(), smallConfig(), o, rng);
    auto bad = Checkpoint::open(badHead.path().toStdString());
    QVERIFY(bad.ok());
    auto valid = (*bad)->validate(smallConfig());
    QVERIFY(!valid.ok());
    QVERIFY2(contains(valid.error(), "'lm_head.weight' has shape [95, 32], expected [96, 32]"), valid.error().c_str());
}

void TestCheckpoint::untiedRequiresHead()
{
    std::mt19937 rng(9);
    ModelConfig untied = smallConfig();
    untied.tieWordEmbeddings = false;
    QTemporaryDir without;
    writeCheckpoint(without.path(), untied, {}, rng);
    auto ckpt = Checkpoint::open(without.path().toStdString());
    QVERIFY(ckpt.ok());
    QVERIFY((*ckpt)->validate(smallConfig()).ok());  // tied: fine without it
    auto valid = (*ckpt)->validate(untied);
    QVERIFY(!valid.ok());
    QVERIFY2(contains(valid.error(), "'lm_head.weight'") && contains(valid.error(), "tie_word_embeddings"),
             valid.error().c_str());

    QTemporaryDir with;
    WriteOptions o;
    o.lmHead = true;
    writeCheckpoint(with.path(), untied, o, rng);
    auto withHead = Checkpoint::open(with.path().toStdString());
    QVERIFY(withHead.ok() && (*withHead)->validate(untied).ok());
    QCOMPARE((*withHead)->lmHead()->name, std::string("lm_head.weight"));
}

void TestCheckpoint::extraTensorsAreIgnored()
{
    QTemporaryDir dir;
    std::mt19937 rng(10);
    WriteOptions o;
    o.extra = {{"model.layers.0.self_attn.rotary_emb.inv_freq", {4}}, {"model.some_buffer", {2, 2}}};
    writeCheckpoint(dir.path(), smallConfig(), o, rng);
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY(ckpt.ok());
    auto valid = (*ckpt)->validate(smallConfig());
    QVERIFY2(valid.ok(), valid.ok() ? "" : valid.error().c_str());
    QVERIFY((*ckpt)->find("model.some_buffer"));
}

void TestCheckpoint::duplicateTensorAcrossShardsIsAnError()
{
    QTemporaryDir dir;
    std::mt19937 rng(11);
    WriteOptions o;
    o.shards = 2;
    writeCheckpoint(dir.path(), smallConfig(), o, rng);
    // Rewrite shard 2 with an extra copy of a tensor that shard 1 also holds.
    auto first = SafetensorsFile::open(dir.filePath("model-00001-of-00002.safetensors").toStdString());
    QVERIFY(first.ok() && !(*first)->tensors().empty());
    const std::string dup = (*first)->tensors().begin()->first;
    auto second = SafetensorsFile::open(dir.filePath("model-00002-of-00002.safetensors").toStdString());
    QVERIFY(second.ok());
    SafetensorsWriter writer;
    for (const auto& [name, t] : (*second)->tensors())
        writer.add(name, t.dtype, t.shape, std::vector<std::byte>(t.data, t.data + t.numBytes));
    const TensorView& d = (*first)->tensors().begin()->second;
    writer.add(dup, d.dtype, d.shape, std::vector<std::byte>(d.data, d.data + d.numBytes));
    second = makeError("closed");  // unmap before overwriting
    QVERIFY(writer.write(dir.filePath("model-00002-of-00002.safetensors").toStdString()).ok());
    auto ckpt = Checkpoint::open(dir.path().toStdString());
    QVERIFY(!ckpt.ok());
    QVERIFY2(contains(ckpt.error(), "'" + dup + "' appears in both"), ckpt.error().c_str());
}

QTEST_APPLESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
