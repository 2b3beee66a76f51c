// GenerationDefaults: the sampling defaults a checkpoint ships in generation_config.json.
// Front ends apply them to fields a request leaves unset (as vLLM's --generation-config auto).
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace brook {

struct GenerationDefaults {
    std::optional<bool> doSample;
    std::optional<float> temperature;
    std::optional<float> topP;
    std::optional<int> topK;
    std::optional<float> minP;
    std::optional<float> repetitionPenalty;
    std::optional<float> presencePenalty;
    std::optional<float> frequencyPenalty;
    std::optional<int> maxNewTokens;
    std::vector<int32_t> eosTokenIds;  // "eos_token_id": an int or a list
};

// A missing file gives empty defaults; a malformed one is an error naming the file.
Result<GenerationDefaults> loadGenerationDefaults(const std::filesystem::path& generationConfigJson);
// Parses generation_config.json text; `sourceName` names the file in errors. Every number is
// range-checked into its field's type (an eos id of 2^40 is an error, not a wrapped 0).
Result<GenerationDefaults> parseGenerationDefaults(std::string_view json, const std::string& sourceName);

} // namespace brook
