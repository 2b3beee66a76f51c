// Parses a dense decoder's config.json (the families of models/model_family.h): ERNIE-4.5 both as
// Baidu shipped it (remote code, "Ernie4_5_ForCausalLM") and as transformers writes it, and
// transformers' Qwen3 and Llama (4.x "rope_theta"/"torch_dtype"; 5.x "rope_parameters"/"dtype").
// Dimensions are never guessed: a missing required key is an error naming the file and key;
// only the keys Hugging Face's own config class defaults (head_dim, tie, bias, token ids) may be absent.
#include "engine/model_config.h"

#include "engine/bounded_json.h"
#include "engine/models/model_family.h"
#include "engine/regular_file.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace brook {

namespace {

using nlohmann::json;

// q_proj's output width (heads x head_dim) stays within what int math elsewhere assumes.
constexpr int64_t kMaxQDim = int64_t{1} << 20;

const char* typeName(const json& value)
{
    if (value.is_number_integer()) return "an integer";
    if (value.is_number()) return "a number";
    return value.type_name();  // "string", "null", "array", ...
}

// Reads keys of one JSON object, each error naming the source and key.
class ConfigReader {
public:
    ConfigReader(const json& root, const std::string& source) : m_root(root), m_source(source) {}

    const json* find(const char* key) const
    {
        auto it = m_root.find(key);
        return it == m_root.end() ? nullptr : &*it;
    }
    Error missing(const char* key) const { return makeError(m_source + ": missing key '" + key + "'"); }
    Error wrongType(const char* key, const json& value, const char* expected) const
    {
        return makeError(m_source + ": key '" + key + "' should be " + expected + ", got " + typeName(value));
    }
    Error invalid(const std::string& what) const { return makeError(m_source + ": " + what); }

    Result<int> requireInt(const char* key) const
    {
        const json* v = find(key);
        if (!v) return missing(key);
        return toInt(key, *v);
    }
    Result<int> optionalInt(const char* key, int fallback) const
    {
        const json* v = find(key);
        if (!v || v->is_null()) return fallback;
        return toInt(key, *v);
    }
    Result<double> requireNumber(const char* key) const
    {
        const json* v = find(key);
        if (!v) return missing(key);
        if (!v->is_number()) return wrongType(key, *v, "a number");
        return v->get<double>();
    }
    Result<bool> optionalBool(const char* key, bool fallback) const
    {
        const json* v = find(key);
        if (!v || v->is_null()) return fallback;
        if (!v->is_boolean()) return wrongType(key, *v, "true or false");
        return v->get<bool>();
    }
    Result<std::string> optionalString(const char* key) const
    {
        const json* v = find(key);
        if (!v || v->is_null()) return std::string();
        if (!v->is_string()) return wrongType(key, *v, "a string");
        return v->get<std::string>();
    }
    // A token id: an integer, null (none) or a list (its first entry, as some configs list eos ids).
    // -1 (an old convention for "none") reads as none; any other negative id is an error.
    Result<int> optionalTokenId(const char* key) const
    {
        const json* v = find(key);
        if (!v || v->is_null()) return -1;
        if (v->is_array() && v->empty()) return -1;
        auto id = toInt(key, v->is_array() ? v->front() : *v);
        if (id && *id < -1) return invalid(std::string("key '") + key + "' " + std::to_string(*id) + " is negative");
        return id;
    }

private:
    Result<int> toInt(const char* key, const json& v) const
    {
        if (!v.is_number_integer()) return wrongType(key, v, "an integer");
        // Unsigned values above INT64_MAX would wrap in get<int64_t>(); they are out of range too.
        if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT32_MAX))
            return invalid(std::string("key '") + key + "' " + std::to_string(v.get<uint64_t>()) + " is out of range");
        const int64_t value = v.get<int64_t>();
        if (value < INT32_MIN || value > INT32_MAX)
            return invalid(std::string("key '") + key + "' " + std::to_string(value) + " is out of range");
        return int(value);
    }

    const json& m_root;
    const std::string& m_source;
};

// rope_scaling (transformers 4.x) or rope_parameters (5.x) of type "llama3": its four numbers.
Result<Llama3RopeScaling> readLlama3Scaling(const ConfigReader& reader, const json& params, const std::string& key)
{
    Llama3RopeScaling s;
    auto number = [&](const char* field, double& target) -> Result<void> {
        auto it = params.find(field);
        if (it == params.end()) return reader.invalid(key + ": rope_type 'llama3' needs '" + field + "'");
        if (!it->is_number())
            return reader.invalid(key + "." + field + " should be a number, got " + typeName(*it));
        target = it->get<double>();
        if (!(target > 0) || target > 1e6)
            return reader.invalid(key + "." + field + " must be positive and at most 1e6");
        return {};
    };
    double original = 0;
    for (auto [field, target] : {std::pair{"factor", &s.factor}, std::pair{"low_freq_factor", &s.lowFreqFactor},
                                 std::pair{"high_freq_factor", &s.highFreqFactor},
                                 std::pair{"original_max_position_embeddings", &original}}) {
        if (auto ok = number(field, *target); !ok) return ok.failure();
    }
    if (!(s.highFreqFactor > s.lowFreqFactor))
        return reader.invalid(key + ": high_freq_factor must be larger than low_freq_factor");
    if (original != double(int(original)))
        return reader.invalid(key + ".original_max_position_embeddings must be an integer");
    s.originalMaxPositions = int(original);
    return s;
}

// rope_theta (transformers 4.x, Baidu) or rope_parameters.rope_theta (transformers 5.x), and a
// rope_scaling of type "llama3" from either place. Other RoPE types are refused.
Result<void> readRope(const ConfigReader& reader, ModelConfig& c)
{
    auto readScaling = [&](const json& params, const char* key) -> Result<void> {
        for (const char* typeKey : {"rope_type", "type"}) {
            auto it = params.find(typeKey);
            if (it == params.end() || it->is_null()) continue;
            if (!it->is_string()) return reader.wrongType(key, *it, "an object with a string rope_type");
            const std::string type = it->get<std::string>();
            if (type == "llama3") {
                auto scaling = readLlama3Scaling(reader, params, key);
                if (!scaling) return scaling.failure();
                c.llama3RopeScaling = *scaling;
            } else if (type != "default") {
                return reader.invalid(std::string(key) + ": unsupported rope_type '" + type +
                                      "' (supported: 'default', 'llama3')");
            }
        }
        return {};
    };
    if (const json* scaling = reader.find("rope_scaling"); scaling && !scaling->is_null()) {
        if (!scaling->is_object()) return reader.wrongType("rope_scaling", *scaling, "an object or null");
        if (auto ok = readScaling(*scaling, "rope_scaling"); !ok) return ok;
    }
    if (const json* params = reader.find("rope_parameters"); params && !params->is_null()) {
        if (!params->is_object()) return reader.wrongType("rope_parameters", *params, "an object");
        if (auto ok = readScaling(*params, "rope_parameters"); !ok) return ok;
        auto it = params->find("rope_theta");
        if (it != params->end()) {
            if (!it->is_number()) return reader.wrongType("rope_parameters.rope_theta", *it, "a number");
            c.ropeTheta = it->get<double>();
            return {};
        }
    }
    if (!reader.find("rope_theta")) return reader.missing("rope_theta");
    auto theta = reader.requireNumber("rope_theta");
    if (!theta) return theta.failure();
    c.ropeTheta = *theta;
    return {};
}

// eos_token_id: one id, or a list of them (Llama 3 lists three); each within the vocabulary.
Result<std::vector<int>> readEosTokenIds(const ConfigReader& reader)
{
    std::vector<int> ids;
    const json* v = reader.find("eos_token_id");
    if (!v || v->is_null()) return ids;
    if (!v->is_array()) {
        auto id = reader.optionalTokenId("eos_token_id");
        if (!id) return id.failure();
        if (*id >= 0) ids.push_back(*id);
        return ids;
    }
    if (v->size() > 64) return reader.invalid("key 'eos_token_id' lists more than 64 ids");
    for (const json& item : *v) {
        if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() > INT32_MAX)
            return reader.invalid("key 'eos_token_id' should list non-negative integers");
        ids.push_back(int(item.get<int64_t>()));
    }
    return ids;
}

}  // namespace

Result<ModelConfig> parseModelConfig(std::string_view text, const std::string& sourceName)
{
    auto parsed = parseBoundedJson(text, sourceName);
    if (!parsed) return parsed.failure();
    const json root = std::move(parsed.value());
    if (!root.is_object()) return makeError(sourceName + ": expected a JSON object at the top level");
    const ConfigReader reader(root, sourceName);
    ModelConfig c;

    const json* architectures = reader.find("architectures");
    if (!architectures) return reader.missing("architectures");
    if (!architectures->is_array() || architectures->empty() || !architectures->front().is_string())
        return reader.wrongType("architectures", *architectures, "a list of strings");
    c.architecture = architectures->front().get<std::string>();
    c.family = findModelFamily(c.architecture);
    if (!c.family)
        return reader.invalid("unsupported architecture '" + c.architecture + "' (supported: " +
                              supportedArchitectures() + ")");

#define BROOK_READ(target, expr)                                                                                       \
    do {                                                                                                               \
        auto r_ = (expr);                                                                                              \
        if (!r_) return r_.failure();                                                                         \
        target = std::move(r_.value());                                                                                \
    } while (0)

    BROOK_READ(c.modelType, reader.optionalString("model_type"));
    BROOK_READ(c.vocabSize, reader.requireInt("vocab_size"));
    BROOK_READ(c.hiddenSize, reader.requireInt("hidden_size"));
    BROOK_READ(c.intermediateSize, reader.requireInt("intermediate_size"));
    BROOK_READ(c.numLayers, reader.requireInt("num_hidden_layers"));
    BROOK_READ(c.numHeads, reader.requireInt("num_attention_heads"));
    BROOK_READ(c.numKvHeads, reader.requireInt("num_key_value_heads"));
    BROOK_READ(c.maxPositionEmbeddings, reader.requireInt("max_position_embeddings"));
    BROOK_READ(c.rmsNormEps, reader.requireNumber("rms_norm_eps"));
    if (auto rope = readRope(reader, c); !rope) return rope.failure();
    BROOK_READ(c.tieWordEmbeddings, reader.optionalBool("tie_word_embeddings", true));
    for (std::string_view key : c.family->biasKeys) {
        bool bias = false;
        BROOK_READ(bias, reader.optionalBool(std::string(key).c_str(), false));
        if (bias)
            return reader.invalid(std::string(key) + " true is not supported (" + std::string(c.family->name) +
                                  " models Brook runs have no biases)");
    }
    BROOK_READ(c.bosTokenId, reader.optionalTokenId("bos_token_id"));
    BROOK_READ(c.eosTokenIds, readEosTokenIds(reader));
    c.eosTokenId = c.eosTokenIds.empty() ? -1 : c.eosTokenIds.front();
    BROOK_READ(c.padTokenId, reader.optionalTokenId("pad_token_id"));
    // transformers 5 renamed torch_dtype to dtype; prefer the newer key when both are present.
    BROOK_READ(c.torchDtype, reader.optionalString("dtype"));
    if (c.torchDtype.empty()) BROOK_READ(c.torchDtype, reader.optionalString("torch_dtype"));
    std::string hiddenAct;
    BROOK_READ(hiddenAct, reader.optionalString("hidden_act"));
    if (const json* quant = reader.find("quantization_config"); quant && !quant->is_null())
        BROOK_READ(c.quantization, parseQuantizationConfig(*quant, sourceName));

    // Positive dimensions first, so the divisions below are safe.
    const std::pair<const char*, int> dims[] = {{"vocab_size", c.vocabSize},
                                                {"hidden_size", c.hiddenSize},
                                                {"intermediate_size", c.intermediateSize},
                                                {"num_hidden_layers", c.numLayers},
                                                {"num_attention_heads", c.numHeads},
                                                {"num_key_value_heads", c.numKvHeads},
                                                {"max_position_embeddings", c.maxPositionEmbeddings}};
    for (const auto& [key, value] : dims) {
        if (value <= 0)
            return reader.invalid(std::string("key '") + key + "' must be positive, got " + std::to_string(value));
    }
    if (reader.find("head_dim") && !reader.find("head_dim")->is_null()) {
        BROOK_READ(c.headDim, reader.requireInt("head_dim"));
        if (c.headDim <= 0) return reader.invalid("key 'head_dim' must be positive, got " + std::to_string(c.headDim));
    } else {
        if (c.hiddenSize % c.numHeads != 0)
            return reader.invalid("no 'head_dim', and hidden_size " + std::to_string(c.hiddenSize) +
                                  " is not divisible by num_attention_heads " + std::to_string(c.numHeads));
        c.headDim = c.hiddenSize / c.numHeads;
    }
#undef BROOK_READ

    // Upper bounds far above any model Brook could run, checked before anything is sized from
    // the config: a config.json saying 100,000,000 layers is an error, not gigabytes of layout.
    const struct {
        const char* key;
        int64_t value, max;
    } limits[] = {
        {"vocab_size", c.vocabSize, int64_t{1} << 24},
        {"hidden_size", c.hiddenSize, int64_t{1} << 16},
        {"intermediate_size", c.intermediateSize, int64_t{1} << 20},
        {"num_hidden_layers", c.numLayers, 1024},
        {"num_attention_heads", c.numHeads, 1024},
        {"num_key_value_heads", c.numKvHeads, 1024},
        {"max_position_embeddings", c.maxPositionEmbeddings, int64_t{1} << 24},
        {"head_dim", c.headDim, 4096},
    };
    for (const auto& [key, value, max] : limits) {
        if (value > max)
            return reader.invalid(std::string("key '") + key + "' " + std::to_string(value) + " is larger than " +
                                  std::to_string(max) + " (no model Brook runs comes near it)");
    }
    if (int64_t(c.numHeads) * c.headDim > kMaxQDim)
        return reader.invalid("num_attention_heads " + std::to_string(c.numHeads) + " x head_dim " +
                              std::to_string(c.headDim) + " is larger than " + std::to_string(kMaxQDim));
    if (c.numKvHeads > c.numHeads)
        return reader.invalid("num_key_value_heads " + std::to_string(c.numKvHeads) +
                              " is more than num_attention_heads " + std::to_string(c.numHeads));
    if (c.numHeads % c.numKvHeads != 0)
        return reader.invalid("num_attention_heads " + std::to_string(c.numHeads) +
                              " is not divisible by num_key_value_heads " + std::to_string(c.numKvHeads));
    if (c.headDim % 2 != 0)
        return reader.invalid("head_dim " + std::to_string(c.headDim) + " must be even for rotary embeddings");
    if (!(c.rmsNormEps > 0)) return reader.invalid("key 'rms_norm_eps' must be positive");
    if (!(c.ropeTheta > 0)) return reader.invalid("rope_theta must be positive");
    if (!hiddenAct.empty() && hiddenAct != "silu")
        return reader.invalid("unsupported hidden_act '" + hiddenAct + "' (only silu)");
    std::vector<std::pair<const char*, int>> ids = {{"bos_token_id", c.bosTokenId}, {"pad_token_id", c.padTokenId}};
    for (int id : c.eosTokenIds) ids.emplace_back("eos_token_id", id);
    for (auto [key, id] : ids) {
        if (id >= c.vocabSize)
            return reader.invalid(std::string("key '") + key + "' " + std::to_string(id) + " is outside vocab_size " +
                                  std::to_string(c.vocabSize));
    }
    if (c.quantization) {
        // Every Linear's K must split into whole groups and its N into whole int32 words.
        const int perWord = 32 / c.quantization->bits;
        for (auto [what, k] :
             {std::pair{"hidden_size", c.hiddenSize}, std::pair{"intermediate_size", c.intermediateSize},
              std::pair{"num_attention_heads * head_dim", c.qDim()}}) {
            if (k % c.quantization->groupSize != 0)
                return reader.invalid(std::string("quantization_config group_size ") +
                                      std::to_string(c.quantization->groupSize) + " does not divide " + what + " " +
                                      std::to_string(k));
        }
        for (auto [what, n] :
             {std::pair{"hidden_size", c.hiddenSize}, std::pair{"intermediate_size", c.intermediateSize},
              std::pair{"num_attention_heads * head_dim", c.qDim()},
              std::pair{"num_key_value_heads * head_dim", c.kvDim()}}) {
            if (n % perWord != 0)
                return reader.invalid(std::string("quantization_config: ") + what + " " + std::to_string(n) +
                                      " is not a multiple of " + std::to_string(perWord) + " (values per int32 at " +
                                      std::to_string(c.quantization->bits) + " bits)");
        }
    }
    return c;
}

std::vector<float> ModelConfig::ropeInverseFrequencies() const
{
    if (llama3RopeScaling) return brook::ropeInverseFrequencies(ropeTheta, headDim, *llama3RopeScaling);
    return brook::ropeInverseFrequencies(ropeTheta, headDim);
}

Result<ModelConfig> loadModelConfig(const std::filesystem::path& configJson)
{
    auto text = readRegularFile(configJson);
    if (!text) return text.failure();
    return parseModelConfig(*text, configJson.string());
}

}  // namespace brook
