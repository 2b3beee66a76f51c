// TokenizerFiles: what the Hugging Face JSON files beside tokenizer.model say about special
// and added tokens (added_tokens.json, special_tokens_map.json, tokenizer_config.json).
// All three are optional; a present but malformed one is an error naming the file.
// Only strings are read here: ids are resolved against the sentencepiece model by Tokenizer.
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace brook {

struct TokenizerFiles {
    // added_tokens.json entries, then tokenizer_config.json's added_tokens_decoder, in file order.
    std::vector<std::pair<std::string, int32_t>> addedTokens;
    // Every "<role>_token" value (eos_token, cls_token, sys_start_token, ...);
    // special_tokens_map.json wins over tokenizer_config.json.
    std::map<std::string, std::string> namedTokens;
    std::vector<std::string> additionalSpecialTokens;

    static Result<TokenizerFiles> read(const std::filesystem::path& modelDir);

    // The three files' texts (nullopt: the file is absent), as read() reads them; errors name
    // each file as modelDir / its name. Never throws.
    struct Texts {
        std::optional<std::string> addedTokens;       // added_tokens.json
        std::optional<std::string> specialTokensMap;  // special_tokens_map.json
        std::optional<std::string> tokenizerConfig;   // tokenizer_config.json
    };
    static Result<TokenizerFiles> parse(const Texts& texts, const std::filesystem::path& modelDir);
};

}  // namespace brook
