// Tests for parseModelConfig / loadModelConfig: Baidu's and Hugging Face's config.json for
// ERNIE-4.5 (both architecture names), transformers 5's rope_parameters / dtype keys, every
// required key missing in turn, wrong types, bad JSON, defaults (head_dim, tie) and the
// consistency checks, plus randomly drawn valid dimensions read back exactly.
#include "engine/model_config.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>

#ifndef _WIN32
#include <sys/stat.h>
#endif

using namespace brook;
using nlohmann::json;

namespace {

// config.json exactly as Baidu shipped ERNIE-4.5-0.3B (docs/model-ernie-4.5.md section 1).
json baiduConfig()
{
    return json::parse(R"({
      "architectures": ["Ernie4_5_ForCausalLM"],
      "auto_map": {"AutoConfig": "configuration_ernie4_5.Ernie4_5_Config"},
      "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 1024,
      "intermediate_size": 3072, "max_position_embeddings": 131072, "model_type": "ernie4_5",
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 18,
      "pad_token_id": 0, "rms_norm_eps": 1e-05, "use_cache": false, "vocab_size": 103424,
      "rope_theta": 500000, "use_bias": false, "tie_word_embeddings": true, "torch_dtype": "bfloat16"})");
}

Result<ModelConfig> parse(const json& j) { return parseModelConfig(j.dump(), "model/config.json"); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestModelConfig : public QObject {
    Q_OBJECT

private slots:
    void parsesBaiduConfig();
    void acceptsBothArchitectureNames();
    void rejectsOtherArchitectures();
    void readsTransformers5RopeParameters();
    void rejectsUnsupportedRopeType();
    void missingRequiredKeyNamesFileAndKey();
    void wrongTypeNamesKey();
    void badJsonNamesFile();
    void headDimDefaultsToHiddenOverHeads();
    void optionalKeysHaveErnieDefaults();
    void consistencyChecks();
    void randomDimensionsReadBack();
    void loadsFromFileAndNamesMissingFile();
    void hugeCountsAreRefusedBeforeUse();
    void outOfRangeIntegersNameTheKey();
    void deepNestingIsAnErrorNotACrash();
    void fifoIsRefusedWithoutBlocking();
};

void TestModelConfig::parsesBaiduConfig()
{
    auto c = parse(baiduConfig());
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().c_str());
    QCOMPARE(c->architecture, std::string("Ernie4_5_ForCausalLM"));
    QCOMPARE(c->modelType, std::string("ernie4_5"));
    QCOMPARE(c->vocabSize, 103424);
    QCOMPARE(c->hiddenSize, 1024);
    QCOMPARE(c->intermediateSize, 3072);
    QCOMPARE(c->numLayers, 18);
    QCOMPARE(c->numHeads, 16);
    QCOMPARE(c->numKvHeads, 2);
    QCOMPARE(c->headDim, 128);
    QCOMPARE(c->maxPositionEmbeddings, 131072);
    QCOMPARE(c->rmsNormEps, 1e-5);
    QCOMPARE(c->ropeTheta, 500000.0);
    QCOMPARE(c->tieWordEmbeddings, true);
    QCOMPARE(c->bosTokenId, 1);
    QCOMPARE(c->eosTokenId, 2);
    QCOMPARE(c->padTokenId, 0);
    QCOMPARE(c->torchDtype, std::string("bfloat16"));
    QCOMPARE(c->qDim(), 2048);
    QCOMPARE(c->kvDim(), 256);
    QCOMPARE(c->groupSize(), 8);
    QCOMPARE(c->kvBytesPerToken(2), int64_t(18432));
}

void TestModelConfig::acceptsBothArchitectureNames()
{
    for (const char* name : {"Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"}) {
        json j = baiduConfig();
        j["architectures"] = {name};
        j["rope_scaling"] = nullptr;  // as transformers writes it
        auto c = parse(j);
        QVERIFY2(c.ok(), name);
        QCOMPARE(c->architecture, std::string(name));
    }
}

void TestModelConfig::rejectsOtherArchitectures()
{
    for (const char* name : {"MistralForCausalLM", "Ernie4_5_MoeForCausalLM", "ernie4_5forcausallm"}) {
        json j = baiduConfig();
        j["architectures"] = {name};
        auto c = parse(j);
        QVERIFY(!c.ok());
        QVERIFY2(contains(c.error(), std::string("'") + name + "'"), c.error().c_str());
        QVERIFY(contains(c.error(), "model/config.json"));
    }
}

void TestModelConfig::readsTransformers5RopeParameters()
{
    json j = baiduConfig();
    j.erase("rope_theta");
    j.erase("torch_dtype");
    j["rope_parameters"] = {{"rope_theta", 123456.5}, {"rope_type", "default"}};
    j["dtype"] = "float16";
    auto c = parse(j);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().c_str());
    QCOMPARE(c->ropeTheta, 123456.5);
    QCOMPARE(c->torchDtype, std::string("float16"));
    // With neither form present the theta is missing, not assumed.
    j.erase("rope_parameters");
    auto missing = parse(j);
    QVERIFY(!missing.ok());
    QVERIFY2(contains(missing.error(), "'rope_theta'"), missing.error().c_str());
}

void TestModelConfig::rejectsUnsupportedRopeType()
{
    json j = baiduConfig();
    j.erase("rope_theta");
    j["rope_parameters"] = {{"rope_theta", 500000}, {"rope_type", "yarn"}, {"factor", 4.0}};
    auto c = parse(j);
    QVERIFY(!c.ok());
    QVERIFY2(contains(c.error(), "unsupported") && contains(c.error(), "yarn"), c.error().c_str());

    json scaled = baiduConfig();
    scaled["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
    auto s = parse(scaled);
    QVERIFY(!s.ok());
    QVERIFY2(contains(s.error(), "unsupported") && contains(s.error(), "linear"), s.error().c_str());
}

void TestModelConfig::missingRequiredKeyNamesFileAndKey()
{
    for (const char* key :
         {"architectures", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
          "num_key_value_heads", "max_position_embeddings", "rms_norm_eps", "rope_theta"}) {
        json j = baiduConfig();
        j.erase(key);
        auto c = parse(j);
        QVERIFY2(!c.ok(), key);
        QVERIFY2(contains(c.error(), "model/config.json"), c.error().c_str());
        QVERIFY2(contains(c.error(), std::string("missing key '") + key + "'"), c.error().c_str());
    }
}

void TestModelConfig::wrongTypeNamesKey()
{
    const std::pair<const char*, json> cases[] = {
        {"hidden_size", "1024"},
        {"vocab_size", 103424.5},
        {"num_hidden_layers", nullptr},
        {"rms_norm_eps", "1e-5"},
        {"tie_word_embeddings", "yes"},
        {"use_bias", 0},
        {"torch_dtype", 16},
        {"architectures", "Ernie4_5ForCausalLM"},
        {"head_dim", json::array({128})},
        {"rope_theta", "500000"},
        {"eos_token_id", "</s>"},
    };
    for (const auto& [key, value] : cases) {
        json j = baiduConfig();
        j[key] = value;
        auto c = parse(j);
        QVERIFY2(!c.ok(), key);
        QVERIFY2(contains(c.error(), std::string("'") + key + "'"), c.error().c_str());
        QVERIFY2(contains(c.error(), "model/config.json"), c.error().c_str());
    }
}

void TestModelConfig::badJsonNamesFile()
{
    for (const char* text : {"", "{", "{\"vocab_size\": 12,}", "[1, 2, 3]", "\"config\"", "\x01\x02garbage"}) {
        auto c = parseModelConfig(text, "some/dir/config.json");
        QVERIFY2(!c.ok(), text);
        QVERIFY2(contains(c.error(), "some/dir/config.json"), c.error().c_str());
    }
}

void TestModelConfig::headDimDefaultsToHiddenOverHeads()
{
    json j = baiduConfig();
    j.erase("head_dim");
    auto c = parse(j);
    QVERIFY(c.ok());
    QCOMPARE(c->headDim, 1024 / 16);
    j["num_attention_heads"] = 24;  // 1024 / 24 is not whole
    j["num_key_value_heads"] = 8;
    auto bad = parse(j);
    QVERIFY(!bad.ok());
    QVERIFY2(contains(bad.error(), "head_dim"), bad.error().c_str());
}

void TestModelConfig::optionalKeysHaveErnieDefaults()
{
    json j = baiduConfig();
    for (const char* key : {"tie_word_embeddings", "use_bias", "bos_token_id", "eos_token_id", "pad_token_id",
                            "torch_dtype", "model_type", "hidden_act"})
        j.erase(key);
    auto c = parse(j);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().c_str());
    QCOMPARE(c->tieWordEmbeddings, true);
    QCOMPARE(c->eosTokenId, -1);
    QCOMPARE(c->torchDtype, std::string());
    j["tie_word_embeddings"] = false;
    j["eos_token_id"] = {2, 100272};  // a list: the first is config's eos
    auto untied = parse(j);
    QVERIFY(untied.ok());
    QCOMPARE(untied->tieWordEmbeddings, false);
    QCOMPARE(untied->eosTokenId, 2);
}

void TestModelConfig::consistencyChecks()
{
    const std::vector<std::pair<json, std::string>> cases = {
        {{{"num_key_value_heads", 3}}, "not divisible by num_key_value_heads"},
        {{{"hidden_size", 0}}, "'hidden_size' must be positive"},
        {{{"num_hidden_layers", -2}}, "'num_hidden_layers' must be positive"},
        {{{"num_key_value_heads", 0}}, "'num_key_value_heads' must be positive"},
        {{{"head_dim", 0}}, "'head_dim' must be positive"},
        {{{"head_dim", 127}}, "even"},
        {{{"rms_norm_eps", 0}}, "rms_norm_eps"},
        {{{"use_bias", true}}, "use_bias"},
        {{{"hidden_act", "gelu"}}, "gelu"},
        {{{"eos_token_id", 103424}}, "eos_token_id"},
    };
    for (const auto& [patch, expected] : cases) {
        json j = baiduConfig();
        j.update(patch);
        auto c = parse(j);
        QVERIFY2(!c.ok(), patch.dump().c_str());
        QVERIFY2(contains(c.error(), expected), c.error().c_str());
    }
}

void TestModelConfig::randomDimensionsReadBack()
{
    std::mt19937 rng(2024);
    for (int i = 0; i < 200; ++i) {
        const int kv = 1 + int(rng() % 8), group = 1 + int(rng() % 8), hd = 2 * (1 + int(rng() % 128));
        json j = baiduConfig();
        j["architectures"] = {i % 2 ? "Ernie4_5ForCausalLM" : "Ernie4_5_ForCausalLM"};
        j["vocab_size"] = 3 + int(rng() % 200000);
        j["hidden_size"] = 1 + int(rng() % 8192);
        j["intermediate_size"] = 1 + int(rng() % 30000);
        j["num_hidden_layers"] = 1 + int(rng() % 100);
        j["num_attention_heads"] = kv * group;
        j["num_key_value_heads"] = kv;
        j["head_dim"] = hd;
        j["max_position_embeddings"] = 1 + int(rng() % 1000000);
        const double theta = 1000.0 + double(rng() % 10000000), eps = std::ldexp(1.0 + double(rng() % 100), -30);
        if (i % 3 == 0) {
            j.erase("rope_theta");
            j["rope_parameters"] = {{"rope_theta", theta}, {"rope_type", "default"}};
        } else {
            j["rope_theta"] = theta;
        }
        j["rms_norm_eps"] = eps;
        auto c = parse(j);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().c_str());
        QCOMPARE(c->vocabSize, j["vocab_size"].get<int>());
        QCOMPARE(c->hiddenSize, j["hidden_size"].get<int>());
        QCOMPARE(c->intermediateSize, j["intermediate_size"].get<int>());
        QCOMPARE(c->numLayers, j["num_hidden_layers"].get<int>());
        QCOMPARE(c->numHeads, kv * group);
        QCOMPARE(c->numKvHeads, kv);
        QCOMPARE(c->headDim, hd);
        QCOMPARE(c->groupSize(), group);
        QCOMPARE(c->maxPositionEmbeddings, j["max_position_embeddings"].get<int>());
        QCOMPARE(c->ropeTheta, theta);
        QCOMPARE(c->rmsNormEps, eps);
    }
}

void TestModelConfig::loadsFromFileAndNamesMissingFile()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("config.json").toStdString();
    std::ofstream(path) << baiduConfig().dump(2);
    auto c = loadModelConfig(path);
    QVERIFY(c.ok());
    QCOMPARE(c->hiddenSize, 1024);
    auto missing = loadModelConfig(dir.filePath("absent/config.json").toStdString());
    QVERIFY(!missing.ok());
    QVERIFY2(contains(missing.error(), "absent/config.json"), missing.error().c_str());
    std::ofstream(path) << "{\"architectures\": [\"Ernie4_5ForCausalLM\"], \"hidden_size\": 1024";
    auto truncated = loadModelConfig(path);
    QVERIFY(!truncated.ok());
    QVERIFY2(contains(truncated.error(), path), truncated.error().c_str());
}

void TestModelConfig::hugeCountsAreRefusedBeforeUse()
{
    // Each passes the int32 range check; used as counts they cost gigabytes or overflow int.
    const std::pair<const char*, json> cases[] = {
        {"num_hidden_layers", 100000000},
        {"num_hidden_layers", 2147483647},
        {"vocab_size", 2000000000},
        {"hidden_size", 1 << 30},
        {"intermediate_size", 1 << 30},
        {"max_position_embeddings", 2147483647},
        {"head_dim", 1 << 30},
        {"num_attention_heads", 1 << 20},
    };
    for (const auto& [key, value] : cases) {
        json j = baiduConfig();
        j[key] = value;
        if (std::string(key) == "num_attention_heads") j["num_key_value_heads"] = value;
        auto c = parse(j);
        QVERIFY2(!c.ok(), key);
        QVERIFY2(contains(c.error(), "model/config.json"), c.error().c_str());
        QVERIFY2(contains(c.error(), std::string("'") + key + "' " + value.dump() + " is larger than"),
                 c.error().c_str());
    }
    // Within each limit, but heads x head_dim would overflow int in qDim().
    json j = baiduConfig();
    j["num_attention_heads"] = 1024;
    j["num_key_value_heads"] = 1024;
    j["head_dim"] = 4096;
    auto wide = parse(j);
    QVERIFY(!wide.ok());
    QVERIFY2(contains(wide.error(), "num_attention_heads 1024 x head_dim 4096"), wide.error().c_str());
}

void TestModelConfig::outOfRangeIntegersNameTheKey()
{
    const std::pair<const char*, json> cases[] = {
        {"eos_token_id", int64_t{1} << 40},       {"eos_token_id", json::array({int64_t{1} << 40})},
        {"bos_token_id", uint64_t(-1)},           {"hidden_size", int64_t{1} << 32},
        {"num_hidden_layers", uint64_t(1) << 63}, {"pad_token_id", -5},
    };
    for (const auto& [key, value] : cases) {
        json j = baiduConfig();
        j[key] = value;
        auto c = parse(j);
        QVERIFY2(!c.ok(), (std::string(key) + " " + value.dump()).c_str());
        QVERIFY2(contains(c.error(), std::string("'") + key + "'"), c.error().c_str());
        QVERIFY2(contains(c.error(), "model/config.json"), c.error().c_str());
    }
    json none = baiduConfig();
    none["pad_token_id"] = -1;  // an old convention for "no pad token"
    auto c = parse(none);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().c_str());
    QCOMPARE(c->padTokenId, -1);
}

void TestModelConfig::deepNestingIsAnErrorNotACrash()
{
    const int depth = 100000;
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    std::string text = baiduConfig().dump();
    text.insert(1, "\"auto_map\": " + deep + ", ");
    auto c = parseModelConfig(text, "deep/config.json");
    QVERIFY(!c.ok());
    QVERIFY2(contains(c.error(), "deep/config.json: JSON nested deeper than"), c.error().c_str());
    // Brackets inside strings are text, not nesting.
    json j = baiduConfig();
    j["note"] = std::string(depth, '[');
    QVERIFY(parse(j).ok());
}

void TestModelConfig::fifoIsRefusedWithoutBlocking()
{
#ifdef _WIN32
    QSKIP("no FIFOs in the Windows file system");
#else
    // Without a writer, reading a FIFO waits forever: this test would hang.
    QTemporaryDir dir;
    const std::string fifo = dir.filePath("config.json").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    auto c = loadModelConfig(fifo);
    QVERIFY(!c.ok());
    QVERIFY2(contains(c.error(), fifo + ": not a regular file"), c.error().c_str());
#endif
}

QTEST_APPLESS_MAIN(TestModelConfig)
#include "test_model_config.moc"
