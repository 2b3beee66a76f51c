// TokenizerFiles: parses the tokenizer JSON files with nlohmann::json. Token values may be
// plain strings or Hugging Face AddedToken objects ({"content": ..., ...}); null means unset.
#include "engine/tokenizer_files.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>

namespace brook {

namespace {

using nlohmann::json;

// Far above any real vocabulary; a larger id is a broken file, not a reason to allocate gigabytes.
constexpr int64_t kMaxTokenId = int64_t{1} << 24;

std::string fileError(const std::filesystem::path& file, const std::string& what) {
    return "tokenizer: " + file.string() + ": " + what;
}

// nullopt when the file does not exist.
Result<std::optional<json>> readJsonFile(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        return std::optional<json>{};
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return makeError(fileError(file, "cannot open"));
    std::stringstream buffer;
    buffer << in.rdbuf();
    json parsed = json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded())
        return makeError(fileError(file, "malformed JSON"));
    if (!parsed.is_object())
        return makeError(fileError(file, "expected a JSON object at the top level"));
    return std::optional<json>{std::move(parsed)};
}

// A token value: "text", {"content": "text", ...} or null (nullopt). Anything else is an error.
Result<std::optional<std::string>> tokenString(const json& value, const std::filesystem::path& file,
                                               const std::string& key) {
    if (value.is_null())
        return std::optional<std::string>{};
    if (value.is_string())
        return std::optional<std::string>{value.get<std::string>()};
    if (value.is_object() && value.contains("content") && value["content"].is_string())
        return std::optional<std::string>{value["content"].get<std::string>()};
    return makeError(fileError(file, "\"" + key + "\" must be a string or an object with \"content\""));
}

bool endsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads "<role>_token" keys and additional_special_tokens from one file.
Result<void> readSpecialTokens(const json& root, const std::filesystem::path& file, bool overwrite,
                               TokenizerFiles& out) {
    for (const auto& [key, value] : root.items()) {
        if (key == "additional_special_tokens") {
            if (value.is_null())
                continue;
            if (!value.is_array())
                return makeError(fileError(file, "\"additional_special_tokens\" must be a list"));
            for (size_t i = 0; i < value.size(); ++i) {
                auto token = tokenString(value[i], file, key + "[" + std::to_string(i) + "]");
                if (!token)
                    return makeError(token.error());
                if (*token)
                    out.additionalSpecialTokens.push_back(std::move(**token));
            }
        } else if (endsWith(key, "_token") && !value.is_boolean()) {  // not add_bos_token: true
            auto token = tokenString(value, file, key);
            if (!token)
                return makeError(token.error());
            if (*token && (overwrite || !out.namedTokens.count(key)))
                out.namedTokens[key] = std::move(**token);
        }
    }
    return {};
}

Result<void> readAddedTokens(const json& root, const std::filesystem::path& file, TokenizerFiles& out) {
    for (const auto& [content, value] : root.items()) {
        if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= kMaxTokenId)
            return makeError(fileError(file, "id of \"" + content + "\" must be an integer in [0, " +
                                                 std::to_string(kMaxTokenId) + ")"));
        out.addedTokens.emplace_back(content, value.get<int32_t>());
    }
    return {};
}

// tokenizer_config.json's {"<id>": {"content": ...}} table (newer transformers versions).
Result<void> readAddedTokensDecoder(const json& table, const std::filesystem::path& file,
                                    TokenizerFiles& out) {
    if (!table.is_object())
        return makeError(fileError(file, "\"added_tokens_decoder\" must be an object"));
    for (const auto& [idText, value] : table.items()) {
        int64_t id = -1;
        try {
            size_t used = 0;
            id = std::stoll(idText, &used);
            if (used != idText.size())
                id = -1;
        } catch (const std::exception&) {
            id = -1;
        }
        if (id < 0 || id >= kMaxTokenId)
            return makeError(fileError(file, "added_tokens_decoder key \"" + idText + "\" is not an id"));
        auto token = tokenString(value, file, "added_tokens_decoder." + idText);
        if (!token)
            return makeError(token.error());
        if (*token)
            out.addedTokens.emplace_back(std::move(**token), static_cast<int32_t>(id));
    }
    return {};
}

} // namespace

Result<TokenizerFiles> TokenizerFiles::read(const std::filesystem::path& modelDir) {
    TokenizerFiles files;

    const auto addedPath = modelDir / "added_tokens.json";
    auto added = readJsonFile(addedPath);
    if (!added)
        return makeError(added.error());
    if (*added) {
        if (auto r = readAddedTokens(**added, addedPath, files); !r)
            return makeError(r.error());
    }

    const auto mapPath = modelDir / "special_tokens_map.json";
    auto specialMap = readJsonFile(mapPath);
    if (!specialMap)
        return makeError(specialMap.error());
    if (*specialMap) {
        if (auto r = readSpecialTokens(**specialMap, mapPath, /*overwrite=*/true, files); !r)
            return makeError(r.error());
    }

    const auto configPath = modelDir / "tokenizer_config.json";
    auto config = readJsonFile(configPath);
    if (!config)
        return makeError(config.error());
    if (*config) {
        if (auto r = readSpecialTokens(**config, configPath, /*overwrite=*/false, files); !r)
            return makeError(r.error());
        if ((*config)->contains("added_tokens_decoder")) {
            if (auto r = readAddedTokensDecoder((**config)["added_tokens_decoder"], configPath, files); !r)
                return makeError(r.error());
        }
    }
    return files;
}

} // namespace brook
