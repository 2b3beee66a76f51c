// GenerationDefaults: the sampling defaults a checkpoint ships in generation_config.json.
// Front ends apply them to fields a request leaves unset (as vLLM's --generation-config auto).
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
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

} // namespace brook
