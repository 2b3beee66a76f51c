#include "server/structured_output_request.h"

#include "server/field_reader.h"

#include <string>
#include <vector>

namespace brook {

namespace {

using json = nlohmann::json;

// A schema arrives as an object (or a boolean); vLLM also takes its JSON text.
std::optional<ApiError> readSchema(const json& value, const std::string& field, StructuredOutput& out)
{
    if (value.is_string()) {
        out.text = value.get<std::string>();
    } else if (value.is_object() || value.is_boolean()) {
        out.text = value.dump();
    } else {
        return ApiError::badRequest(
            "'" + field + "' must be a JSON schema (an object), got " + FieldReader::typeName(value), field);
    }
    out.kind = StructuredOutput::Kind::JsonSchema;
    out.field = field;
    return std::nullopt;
}

std::optional<ApiError> readString(const json& value, const std::string& field, StructuredOutput::Kind kind,
                                   StructuredOutput& out)
{
    if (!value.is_string())
        return ApiError::badRequest("'" + field + "' must be a string, got " + FieldReader::typeName(value), field);
    out.kind = kind;
    out.text = value.get<std::string>();
    out.field = field;
    return std::nullopt;
}

std::optional<ApiError> readChoices(const json& value, const std::string& field, StructuredOutput& out)
{
    if (!value.is_array() || value.empty())
        return ApiError::badRequest("'" + field + "' must be a non-empty list of strings", field);
    out.choices.clear();
    for (const json& choice : value) {
        if (!choice.is_string())
            return ApiError::badRequest("'" + field + "' must be a non-empty list of strings", field);
        out.choices.push_back(choice.get<std::string>());
    }
    out.kind = StructuredOutput::Kind::Choice;
    out.field = field;
    return std::nullopt;
}

std::optional<ApiError> readResponseFormat(const json& format, StructuredOutput& out)
{
    if (!format.is_object())
        return ApiError::badRequest(std::string("'response_format' must be an object, got ") +
                                        FieldReader::typeName(format),
                                    "response_format");
    std::string type = "text";
    if (auto t = format.find("type"); t != format.end() && !t->is_null()) {
        if (!t->is_string())
            return ApiError::badRequest(std::string("'response_format.type' must be a string, got ") +
                                            FieldReader::typeName(*t),
                                        "response_format.type");
        type = t->get<std::string>();
    }
    if (type == "text") return std::nullopt;
    if (type == "json_object") {
        out.kind = StructuredOutput::Kind::JsonObject;
        out.field = "response_format";
        return std::nullopt;
    }
    if (type != "json_schema")
        return ApiError::badRequest("'response_format.type' must be 'text', 'json_object' or 'json_schema', got '" +
                                        type + "'",
                                    "response_format.type");
    const auto spec = format.find("json_schema");
    if (spec == format.end() || !spec->is_object())
        return ApiError::badRequest("'response_format.json_schema' must be an object with a 'schema'",
                                    "response_format.json_schema");
    if (auto name = spec->find("name"); name != spec->end() && !name->is_string())
        return ApiError::badRequest("'response_format.json_schema.name' must be a string",
                                    "response_format.json_schema.name");
    if (auto strict = spec->find("strict"); strict != spec->end() && !strict->is_null() && !strict->is_boolean())
        return ApiError::badRequest("'response_format.json_schema.strict' must be a boolean",
                                    "response_format.json_schema.strict");
    const auto schema = spec->find("schema");
    // OpenAI lets the schema out; then any JSON object is what the client gets.
    if (schema == spec->end() || schema->is_null()) {
        out.kind = StructuredOutput::Kind::JsonObject;
        out.field = "response_format.json_schema";
        return std::nullopt;
    }
    return readSchema(*schema, "response_format.json_schema.schema", out);
}

std::optional<ApiError> readStructuredOutputs(const json& spec, StructuredOutput& out)
{
    if (!spec.is_object())
        return ApiError::badRequest(std::string("'structured_outputs' must be an object, got ") +
                                        FieldReader::typeName(spec),
                                    "structured_outputs");
    int given = 0;
    for (const auto& [key, value] : spec.items()) {
        if (value.is_null()) continue;
        const std::string field = "structured_outputs." + key;
        std::optional<ApiError> error;
        if (key == "json") error = readSchema(value, field, out);
        else if (key == "regex") error = readString(value, field, StructuredOutput::Kind::Regex, out);
        else if (key == "grammar") error = readString(value, field, StructuredOutput::Kind::Grammar, out);
        else if (key == "choice") error = readChoices(value, field, out);
        else if (key == "json_object") {
            if (!value.is_boolean()) return ApiError::badRequest("'" + field + "' must be a boolean", field);
            if (!value.get<bool>()) continue;
            out.kind = StructuredOutput::Kind::JsonObject;
            out.field = field;
        } else if (key == "disable_fallback" || key == "disable_any_whitespace" ||
                   key == "disable_additional_properties" || key == "whitespace_pattern") {
            continue;  // vLLM's backend hints: this engine has one backend and fixed whitespace
        } else {
            return ApiError::badRequest(
                "'" + field + "' is not supported (json, regex, choice, grammar, json_object are)", field);
        }
        if (error) return error;
        ++given;
    }
    if (given > 1)
        return ApiError::badRequest("'structured_outputs' must set exactly one of json, regex, choice, grammar and "
                                    "json_object",
                                    "structured_outputs");
    return std::nullopt;
}

}  // namespace

std::optional<ApiError> parseStructuredOutput(const json& body, StructuredOutput& out)
{
    out = StructuredOutput{};
    FieldReader f(body);
    std::vector<std::string> sources;
    StructuredOutput candidate;
    if (const json* format = f.get("response_format")) {
        if (auto error = readResponseFormat(*format, candidate)) return error;
        if (candidate.active()) sources.push_back("response_format");
    }
    if (const json* spec = f.get("structured_outputs")) {
        StructuredOutput fromSpec;
        if (auto error = readStructuredOutputs(*spec, fromSpec)) return error;
        if (fromSpec.active()) {
            candidate = fromSpec;
            sources.push_back("structured_outputs");
        }
    }
    // vLLM's older top-level names.
    const std::pair<const char*, StructuredOutput::Kind> legacy[] = {
        {"guided_json", StructuredOutput::Kind::JsonSchema},
        {"guided_regex", StructuredOutput::Kind::Regex},
        {"guided_choice", StructuredOutput::Kind::Choice},
        {"guided_grammar", StructuredOutput::Kind::Grammar}};
    for (const auto& [key, kind] : legacy) {
        const json* value = f.get(key);
        if (!value) continue;
        StructuredOutput fromLegacy;
        std::optional<ApiError> error;
        if (kind == StructuredOutput::Kind::JsonSchema) error = readSchema(*value, key, fromLegacy);
        else if (kind == StructuredOutput::Kind::Choice) error = readChoices(*value, key, fromLegacy);
        else error = readString(*value, key, kind, fromLegacy);
        if (error) return error;
        candidate = fromLegacy;
        sources.push_back(key);
    }
    if (sources.size() > 1)
        return ApiError::badRequest(
            "'" + sources[0] + "' and '" + sources[1] + "' both ask for structured output; send one", sources[1]);
    if (!candidate.active()) return std::nullopt;
    if (auto valid = checkStructuredOutput(candidate); !valid)
        return ApiError::badRequest(valid.failure().message, valid.failure().field);
    out = std::move(candidate);
    return std::nullopt;
}

}  // namespace brook
