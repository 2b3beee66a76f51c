// parseBoundedJson: parses JSON from an untrusted file (config.json, generation_config.json,
// the tokenizer JSON files, a safetensors header) into nlohmann::json, refusing deep nesting.
// nlohmann's parser itself is iterative, but copying, comparing, dumping and destroying
// (before 3.10) a value recurse once per level: a file nested 100,000 deep would overflow
// the stack long after it parsed. No file Brook reads nests beyond a handful of levels.
#pragma once

#include "engine/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace brook {

constexpr int kMaxJsonDepth = 64;

// Errors: "<source>: not valid JSON" or "<source>: JSON nested deeper than 64 levels".
// Never throws.
Result<nlohmann::json> parseBoundedJson(std::string_view text, const std::string& source, int maxDepth = kMaxJsonDepth);

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count);
// stops counting, and returns maxDepth + 1, as soon as the text goes deeper than maxDepth.
int jsonNestingDepth(std::string_view text, int maxDepth);

}  // namespace brook
