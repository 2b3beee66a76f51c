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

// The one mapping from generation_config.json to sampling knobs, for anything with SamplingParams
// field names (SamplingParams itself, the app's ChatSettings): each value the file gives replaces
// the knob's; do_sample false means greedy. max_new_tokens is not a sampling knob: each front end
// applies it to its own default length.
template <typename Knobs>
void applyGenerationDefaults(const GenerationDefaults& d, Knobs& k)
{
    if (d.temperature) k.temperature = *d.temperature;
    if (d.doSample && !*d.doSample) k.temperature = 0;
    if (d.topP) k.topP = *d.topP;
    if (d.topK) k.topK = *d.topK;
    if constexpr (requires { k.minP; }) {
        if (d.minP) k.minP = *d.minP;
    }
    if (d.repetitionPenalty) k.repetitionPenalty = *d.repetitionPenalty;
    if (d.presencePenalty) k.presencePenalty = *d.presencePenalty;
    if (d.frequencyPenalty) k.frequencyPenalty = *d.frequencyPenalty;
}

// A missing file gives empty defaults; a malformed one is an error naming the file.
Result<GenerationDefaults> loadGenerationDefaults(const std::filesystem::path& generationConfigJson);
// Parses generation_config.json text; `sourceName` names the file in errors. Every number is
// range-checked into its field's type (an eos id of 2^40 is an error, not a wrapped 0).
Result<GenerationDefaults> parseGenerationDefaults(std::string_view json, const std::string& sourceName);

}  // namespace brook
