// JsonSchemaCompiler: a JSON Schema -> a grammar deriving compact JSON texts that validate
// against it (a subset of them: one key order, at most one space after ':' and ',', numbers
// without exponents when bounded). The supported keywords are listed in docs/server.md
// ("Structured outputs"); any other keyword is refused with a message naming it and where it is,
// because a schema half-read would let invalid output through.
#pragma once

#include "engine/structured/grammar.h"

#include <memory>
#include <string>
#include <string_view>

namespace brook::structured {

// `schemaText`: the schema as JSON text, read in its own key order (so properties come out in the
// order the schema lists them). `field`: the request field it came in, for errors.
Result<std::shared_ptr<const Grammar>> compileJsonSchema(std::string_view schemaText, const std::string& field,
                                                         const GrammarLimits& limits = {});
// Any JSON object (response_format {"type": "json_object"}).
Result<std::shared_ptr<const Grammar>> compileAnyJsonObject(const GrammarLimits& limits = {});

}  // namespace brook::structured
