// Reads generation_config.json. The file is optional and every key in it is optional; a key
// set to null counts as absent. Keys Brook does not use are ignored.
#include "engine/generation_config.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace brook {

namespace {

using nlohmann::json;

Error wrongType(const std::string& source, const char* key, const char* expected) {
    return makeError(source + ": key '" + key + "' should be " + expected);
}

Result<void> readFloat(const json& root, const std::string& source, const char* key, std::optional<float>& out) {
    auto it = root.find(key);
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_number()) return wrongType(source, key, "a number");
    out = it->get<float>();
    return {};
}

Result<void> readInt(const json& root, const std::string& source, const char* key, std::optional<int>& out) {
    auto it = root.find(key);
    if (it == root.end() || it->is_null()) return {};
    if (!it->is_number_integer()) return wrongType(source, key, "an integer");
    out = int(it->get<int64_t>());
    return {};
}

} // namespace

Result<GenerationDefaults> loadGenerationDefaults(const std::filesystem::path& path) {
    GenerationDefaults defaults;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return defaults;
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError(path.string() + ": cannot read file");
    std::ostringstream text;
    text << in.rdbuf();
    const std::string source = path.string();
    json root = json::parse(text.str(), nullptr, false);
    if (root.is_discarded()) return makeError(source + ": not valid JSON");
    if (!root.is_object()) return makeError(source + ": expected a JSON object at the top level");

    if (auto it = root.find("do_sample"); it != root.end() && !it->is_null()) {
        if (!it->is_boolean()) return wrongType(source, "do_sample", "true or false");
        defaults.doSample = it->get<bool>();
    }
    for (auto [key, target] : {std::pair{"temperature", &defaults.temperature}, std::pair{"top_p", &defaults.topP},
                               std::pair{"min_p", &defaults.minP},
                               std::pair{"repetition_penalty", &defaults.repetitionPenalty},
                               std::pair{"presence_penalty", &defaults.presencePenalty},
                               std::pair{"frequency_penalty", &defaults.frequencyPenalty}}) {
        if (auto ok = readFloat(root, source, key, *target); !ok) return makeError(ok.error());
    }
    for (auto [key, target] : {std::pair{"top_k", &defaults.topK}, std::pair{"max_new_tokens", &defaults.maxNewTokens}}) {
        if (auto ok = readInt(root, source, key, *target); !ok) return makeError(ok.error());
    }
    if (auto it = root.find("eos_token_id"); it != root.end() && !it->is_null()) {
        const json list = it->is_array() ? *it : json::array({*it});
        for (const json& id : list) {
            if (!id.is_number_integer()) return wrongType(source, "eos_token_id", "an integer or a list of integers");
            defaults.eosTokenIds.push_back(int32_t(id.get<int64_t>()));
        }
    }
    return defaults;
}

} // namespace brook
