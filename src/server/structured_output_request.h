// The structured-output fields of a chat or completions body -> StructuredOutput:
//   response_format: {"type": "text" | "json_object"} or
//                    {"type": "json_schema", "json_schema": {"name", "schema", "strict", "description"}} (OpenAI);
//   structured_outputs: {"json": SCHEMA | "regex": STR | "choice": [STR] | "grammar": EBNF | "json_object": true}
//   (vLLM), and vLLM's older guided_json / guided_regex / guided_choice / guided_grammar.
// At most one of them; the spec is compiled once here (checkStructuredOutput) so a schema the
// engine cannot honour is a 400 naming the field and the feature before anything streams.
#pragma once

#include "engine/structured_output.h"
#include "server/api_error.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace brook {

std::optional<ApiError> parseStructuredOutput(const nlohmann::json& body, StructuredOutput& out);

}  // namespace brook
