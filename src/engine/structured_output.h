// StructuredOutput: what a request's output must look like (plain data, part of SamplingParams):
// JSON (any object, or valid against a JSON schema), a full match of a regex, one of a list of
// strings, or a string of an EBNF grammar. The engine compiles it to a grammar at submit and
// masks every sampled token by it (engine/structured/). Public: the server and the app fill it.
#pragma once

#include "engine/result.h"

#include <string>
#include <vector>

namespace brook {

struct StructuredOutput {
    enum class Kind { None, JsonObject, JsonSchema, Regex, Choice, Grammar };
    Kind kind = Kind::None;
    std::string text;                  // JsonSchema: the schema as JSON text; Regex; Grammar (EBNF)
    std::vector<std::string> choices;  // Choice
    // The request field it came in ("response_format.json_schema.schema"), named by errors.
    std::string field = "structured_outputs";

    bool active() const { return kind != Kind::None; }
};

// Compiles without a model and reports the first problem: a schema keyword that is not
// supported, a bad regex or grammar, a limit crossed. InvalidArgument errors naming `field`.
// Thread-safe; work and memory are bounded (hostile input gets an error, not a hang).
Result<void> checkStructuredOutput(const StructuredOutput& output);

}  // namespace brook
