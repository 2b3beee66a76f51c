// Reads generation_config.json. The file is optional and every key in it is optional; a key
// set to null counts as absent. Keys Brook does not use are ignored.
#include "engine/generation_config.h"

#include "engine/bounded_json.h"
#include "engine/regular_file.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace brook {

namespace {

using nlohmann::json;

Error wrongType(const std::string& source, const char* key, const char* expected)
{
    return makeError(source + ": key '" + key + "' should be " + expected);
}

Error outOfRange(const std::string& source, const char* key, const json& value, const char* range)
{
    return makeError(source + ": key '" + key + "' " + value.dump() + " is out of range (" + range + ")");
}

Result<void> readFloat(const json& root, const std::string& source, const char* key, std::optional<float>& out)
{
    auto it = root.find(key);
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_number()) return wrongType(source, key, "a number");
    // Narrowing a double beyond float's range is undefined behaviour, so it is checked first.
    const double value = it->get<double>();
    if (!(std::fabs(value) <= double(std::numeric_limits<float>::max())))
        return outOfRange(source, key, *it, "a float");
    out = float(value);
    return {};
}

// An integer that fits int32_t: get<int64_t>() alone would wrap 2^40 to 0 on the way to int.
std::optional<int32_t> toInt32(const json& value)
{
    if (value.is_number_unsigned())
        return value.get<uint64_t>() <= uint64_t(std::numeric_limits<int32_t>::max())
                   ? std::optional<int32_t>(int32_t(value.get<uint64_t>()))
                   : std::nullopt;
    const int64_t v = value.get<int64_t>();
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) return std::nullopt;
    return int32_t(v);
}

Result<void> readInt(const json& root, const std::string& source, const char* key, std::optional<int>& out)
{
    auto it = root.find(key);
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_number_integer()) return wrongType(source, key, "an integer");
    const auto value = toInt32(*it);
    if (!value) return outOfRange(source, key, *it, "a 32-bit integer");
    out = *value;
    return {};
}

}  // namespace

Result<GenerationDefaults> parseGenerationDefaults(std::string_view text, const std::string& source)
{
    auto parsed = parseBoundedJson(text, source);
    if (!parsed) return parsed.failure();
    const json& root = parsed.value();
    if (!root.is_object()) return makeError(source + ": expected a JSON object at the top level");

    GenerationDefaults defaults;
    if (auto it = root.find("do_sample"); it != root.end() && !it->is_null()) {
        if (!it->is_boolean()) return wrongType(source, "do_sample", "true or false");
        defaults.doSample = it->get<bool>();
    }
    for (auto [key, target] :
         {std::pair{"temperature", &defaults.temperature}, std::pair{"top_p", &defaults.topP},
          std::pair{"min_p", &defaults.minP}, std::pair{"repetition_penalty", &defaults.repetitionPenalty},
          std::pair{"presence_penalty", &defaults.presencePenalty},
          std::pair{"frequency_penalty", &defaults.frequencyPenalty}}) {
        if (auto ok = readFloat(root, source, key, *target); !ok) return ok.failure();
    }
    for (auto [key, target] :
         {std::pair{"top_k", &defaults.topK}, std::pair{"max_new_tokens", &defaults.maxNewTokens}}) {
        if (auto ok = readInt(root, source, key, *target); !ok) return ok.failure();
    }
    if (auto it = root.find("eos_token_id"); it != root.end() && !it->is_null()) {
        // An int or a list of ints; iterated in place (copying a value would recurse over it).
        auto readId = [&](const json& id) -> Result<void> {
            if (!id.is_number_integer()) return wrongType(source, "eos_token_id", "an integer or a list of integers");
            const auto value = toInt32(id);
            if (!value || *value < 0) return outOfRange(source, "eos_token_id", id, "a token id, 0 to 2^31 - 1");
            defaults.eosTokenIds.push_back(*value);
            return {};
        };
        if (it->is_array()) {
            for (const json& id : *it)
                if (auto ok = readId(id); !ok) return ok.failure();
        } else if (auto ok = readId(*it); !ok) {
            return ok.failure();
        }
    }
    return defaults;
}

Result<GenerationDefaults> loadGenerationDefaults(const std::filesystem::path& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return GenerationDefaults{};
    auto text = readRegularFile(path);
    if (!text) return text.failure();
    return parseGenerationDefaults(*text, path.string());
}

}  // namespace brook
