// Parses ERNIE-4.5's config.json, both as Baidu shipped it (remote code, "Ernie4_5_ForCausalLM")
// and as transformers writes it (4.x "rope_theta"/"torch_dtype"; 5.x "rope_parameters"/"dtype").
// Dimensions are never guessed: a missing required key is an error naming the file and key;
// only the keys Hugging Face's own config class defaults (head_dim, tie, bias, token ids) may be absent.
#include "engine/model_config.h"

#include "engine/bounded_json.h"
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

// rope_theta (transformers 4.x, Baidu) or rope_parameters.rope_theta (transformers 5.x).
Result<double> readRopeTheta(const ConfigReader& reader)
{
    auto checkRopeType = [&](const json& params, const char* key) -> Result<void> {
        for (const char* typeKey : {"rope_type", "type"}) {
            auto it = params.find(typeKey);
            if (it == params.end() || it->is_null()) continue;
            if (!it->is_string()) return reader.wrongType(key, *it, "an object with a string rope_type");
            if (it->get<std::string>() != "default")
                return reader.invalid(std::string(key) + ": unsupported rope_type '" + it->get<std::string>() +
                                      "' (only 'default' RoPE is supported)");
        }
        return {};
    };
    if (const json* scaling = reader.find("rope_scaling"); scaling && !scaling->is_null()) {
        if (!scaling->is_object()) return reader.wrongType("rope_scaling", *scaling, "an object or null");
        if (auto ok = checkRopeType(*scaling, "rope_scaling"); !ok) return ok.failure();
    }
    if (const json* params = reader.find("rope_parameters"); params && !params->is_null()) {
        if (!params->is_object()) return reader.wrongType("rope_parameters", *params, "an object");
        if (auto ok = checkRopeType(*params, "rope_parameters"); !ok) return ok.failure();
        auto it = params->find("rope_theta");
        if (it != params->end()) {
            if (!it->is_number()) return reader.wrongType("rope_parameters.rope_theta", *it, "a number");
            return it->get<double>();
        }
    }
    if (reader.find("rope_theta")) return reader.requireNumber("rope_theta");
    return reader.missing("rope_theta");
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
    if (c.architecture != "Ernie4_5ForCausalLM" && c.architecture != "Ernie4_5_ForCausalLM")
        return reader.invalid("unsupported architecture '" + c.architecture +
                              "' (supported: Ernie4_5ForCausalLM, Ernie4_5_ForCausalLM)");

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
    BROOK_READ(c.ropeTheta, readRopeTheta(reader));
    BROOK_READ(c.tieWordEmbeddings, reader.optionalBool("tie_word_embeddings", true));
    BROOK_READ(c.useBias, reader.optionalBool("use_bias", false));
    BROOK_READ(c.bosTokenId, reader.optionalTokenId("bos_token_id"));
    BROOK_READ(c.eosTokenId, reader.optionalTokenId("eos_token_id"));
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
    if (c.useBias) return reader.invalid("use_bias true is not supported (ERNIE-4.5 dense models have no biases)");
    if (!hiddenAct.empty() && hiddenAct != "silu")
        return reader.invalid("unsupported hidden_act '" + hiddenAct + "' (only silu)");
    for (auto [key, id] : {std::pair{"bos_token_id", c.bosTokenId}, std::pair{"eos_token_id", c.eosTokenId},
                           std::pair{"pad_token_id", c.padTokenId}}) {
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
    if (!c.modelType.empty() && c.modelType != "ernie4_5")
        spdlog::warn("{}: model_type is '{}', expected 'ernie4_5'", sourceName, c.modelType);
    return c;
}

Result<ModelConfig> loadModelConfig(const std::filesystem::path& configJson)
{
    auto text = readRegularFile(configJson);
    if (!text) return text.failure();
    return parseModelConfig(*text, configJson.string());
}

}  // namespace brook
