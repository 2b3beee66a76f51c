// TokenizerFiles: parses the tokenizer JSON files with nlohmann::json. Token values may be
// plain strings or Hugging Face AddedToken objects ({"content": ..., ...}); null means unset.
#include "engine/tokenizer_files.h"

#include "engine/bounded_json.h"
#include "engine/regular_file.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdint>
#include <optional>

namespace brook {

namespace {

using nlohmann::json;

// Far above any real vocabulary; a larger id is a broken file, not a reason to allocate gigabytes.
constexpr int64_t kMaxTokenId = int64_t{1} << 24;

std::string fileError(const std::filesystem::path& file, const std::string& what)
{
    return "tokenizer: " + file.string() + ": " + what;
}

// nullopt when the file does not exist.
Result<std::optional<std::string>> readOptionalFile(const std::filesystem::path& file)
{
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return std::optional<std::string>{};
    auto text = readRegularFile(file);
    if (!text) return makeError("tokenizer: " + text.error());
    return std::optional<std::string>{std::move(text.value())};
}

// nullopt when there is no text (the file is absent).
Result<std::optional<json>> parseJsonFile(const std::optional<std::string>& text, const std::filesystem::path& file)
{
    if (!text) return std::optional<json>{};
    if (jsonNestingDepth(*text, kMaxJsonDepth) > kMaxJsonDepth)
        return makeError(fileError(file, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"));
    json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return makeError(fileError(file, "malformed JSON"));
    if (!parsed.is_object()) return makeError(fileError(file, "expected a JSON object at the top level"));
    return std::optional<json>{std::move(parsed)};
}

// A token value: "text", {"content": "text", ...} or null (nullopt). Anything else is an error.
Result<std::optional<std::string>> tokenString(const json& value, const std::filesystem::path& file,
                                               const std::string& key)
{
    if (value.is_null()) return std::optional<std::string>{};
    if (value.is_string()) return std::optional<std::string>{value.get<std::string>()};
    if (value.is_object() && value.contains("content") && value["content"].is_string())
        return std::optional<std::string>{value["content"].get<std::string>()};
    return makeError(fileError(file, "\"" + key + "\" must be a string or an object with \"content\""));
}

bool endsWith(const std::string& s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads "<role>_token" keys and additional_special_tokens from one file.
Result<void> readSpecialTokens(const json& root, const std::filesystem::path& file, bool overwrite, TokenizerFiles& out)
{
    for (const auto& [key, value] : root.items()) {
        if (key == "additional_special_tokens") {
            if (value.is_null()) continue;
            if (!value.is_array()) return makeError(fileError(file, "\"additional_special_tokens\" must be a list"));
            for (size_t i = 0; i < value.size(); ++i) {
                auto token = tokenString(value[i], file, key + "[" + std::to_string(i) + "]");
                if (!token) return token.failure();
                if (*token) out.additionalSpecialTokens.push_back(std::move(**token));
            }
        } else if (endsWith(key, "_token") && !value.is_boolean()) {  // not add_bos_token: true
            auto token = tokenString(value, file, key);
            if (!token) return token.failure();
            if (*token && (overwrite || !out.namedTokens.count(key))) out.namedTokens[key] = std::move(**token);
        }
    }
    return {};
}

Result<void> readAddedTokens(const json& root, const std::filesystem::path& file, TokenizerFiles& out)
{
    for (const auto& [content, value] : root.items()) {
        if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= kMaxTokenId)
            return makeError(fileError(file, "id of \"" + content + "\" must be an integer in [0, " +
                                                 std::to_string(kMaxTokenId) + ")"));
        out.addedTokens.emplace_back(content, value.get<int32_t>());
    }
    return {};
}

// tokenizer_config.json's {"<id>": {"content": ...}} table (newer transformers versions).
Result<void> readAddedTokensDecoder(const json& table, const std::filesystem::path& file, TokenizerFiles& out)
{
    if (!table.is_object()) return makeError(fileError(file, "\"added_tokens_decoder\" must be an object"));
    for (const auto& [idText, value] : table.items()) {
        // Digits only: from_chars takes no sign, space or suffix, and reports overflow.
        int64_t id = -1;
        const char* end = idText.data() + idText.size();
        if (auto [ptr, ec] = std::from_chars(idText.data(), end, id); ec != std::errc() || ptr != end) id = -1;
        if (id < 0 || id >= kMaxTokenId)
            return makeError(fileError(file, "added_tokens_decoder key \"" + idText + "\" is not an id"));
        auto token = tokenString(value, file, "added_tokens_decoder." + idText);
        if (!token) return token.failure();
        if (*token) out.addedTokens.emplace_back(std::move(**token), static_cast<int32_t>(id));
    }
    return {};
}

}  // namespace

Result<TokenizerFiles> TokenizerFiles::read(const std::filesystem::path& modelDir)
{
    Texts texts;
    for (auto [name, target] : {std::pair{"added_tokens.json", &texts.addedTokens},
                                std::pair{"special_tokens_map.json", &texts.specialTokensMap},
                                std::pair{"tokenizer_config.json", &texts.tokenizerConfig}}) {
        auto text = readOptionalFile(modelDir / name);
        if (!text) return text.failure();
        *target = std::move(text.value());
    }
    return parse(texts, modelDir);
}

Result<TokenizerFiles> TokenizerFiles::parse(const Texts& texts, const std::filesystem::path& modelDir)
{
    TokenizerFiles files;

    const auto addedPath = modelDir / "added_tokens.json";
    auto added = parseJsonFile(texts.addedTokens, addedPath);
    if (!added) return added.failure();
    if (*added) {
        if (auto r = readAddedTokens(**added, addedPath, files); !r) return r.failure();
    }

    const auto mapPath = modelDir / "special_tokens_map.json";
    auto specialMap = parseJsonFile(texts.specialTokensMap, mapPath);
    if (!specialMap) return specialMap.failure();
    if (*specialMap) {
        if (auto r = readSpecialTokens(**specialMap, mapPath, /*overwrite=*/true, files); !r)
            return r.failure();
    }

    const auto configPath = modelDir / "tokenizer_config.json";
    auto config = parseJsonFile(texts.tokenizerConfig, configPath);
    if (!config) return config.failure();
    if (*config) {
        if (auto r = readSpecialTokens(**config, configPath, /*overwrite=*/false, files); !r)
            return r.failure();
        if (auto decoder = (*config)->find("added_tokens_decoder"); decoder != (*config)->end()) {
            if (auto r = readAddedTokensDecoder(*decoder, configPath, files); !r) return r.failure();
        }
    }
    return files;
}

}  // namespace brook
