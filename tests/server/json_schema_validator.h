// JsonSchemaValidator: the JSON-Schema (2020-12) subset that OpenAI's published response schemas
// use (tests/data/openai-openapi), enough to check brook-serve's answers against them without
// node or ajv: type, enum, const, required, properties, additionalProperties, items, anyOf, oneOf,
// allOf and $ref into the bundle's $defs. `format` is an annotation in 2020-12 and is not asserted.
// Any other keyword is reported as an error, so a refreshed bundle that needs more cannot pass by
// being half-read.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace brook::testsupport {

class JsonSchemaValidator {
public:
    explicit JsonSchemaValidator(nlohmann::json bundle) : m_bundle(std::move(bundle)) {}

    bool hasRoot(const std::string& name) const { return m_bundle["$defs"].contains(name); }
    const nlohmann::json& root(const std::string& name) const { return m_bundle["$defs"].at(name); }

    // Every violation of `instance` against $defs/<rootName>, as "path: what"; empty when valid.
    std::vector<std::string> validate(const nlohmann::json& instance, const std::string& rootName) const
    {
        std::vector<std::string> errors;
        if (!hasRoot(rootName)) return {"no schema named " + rootName + " in the bundle"};
        check(root(rootName), instance, "$", errors);
        return errors;
    }
    // Against a schema given inline (one derived from a root); its $refs resolve in the bundle.
    std::vector<std::string> validateAgainst(const nlohmann::json& instance, const nlohmann::json& schema) const
    {
        std::vector<std::string> errors;
        check(schema, instance, "$", errors);
        return errors;
    }

private:
    static bool hasType(const nlohmann::json& v, const std::string& type)
    {
        if (type == "null") return v.is_null();
        if (type == "boolean") return v.is_boolean();
        if (type == "string") return v.is_string();
        if (type == "array") return v.is_array();
        if (type == "object") return v.is_object();
        if (type == "number") return v.is_number();
        // 2020-12: a number with a zero fractional part is an integer too (1.0).
        if (type == "integer")
            return v.is_number_integer() || (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>());
        return false;
    }

    const nlohmann::json* resolve(const std::string& ref) const
    {
        const std::string prefix = "#/$defs/";
        if (ref.rfind(prefix, 0) != 0) return nullptr;
        auto it = m_bundle["$defs"].find(ref.substr(prefix.size()));
        return it == m_bundle["$defs"].end() ? nullptr : &*it;
    }

    // How many of `schemas` the instance matches; the first failure's errors go to `firstErrors`.
    size_t countMatches(const nlohmann::json& schemas, const nlohmann::json& v, const std::string& path,
                        std::vector<std::string>& firstErrors) const
    {
        size_t matches = 0;
        for (const auto& s : schemas) {
            std::vector<std::string> errors;
            check(s, v, path, errors);
            if (errors.empty()) ++matches;
            else if (firstErrors.empty()) firstErrors = std::move(errors);
        }
        return matches;
    }

    void check(const nlohmann::json& schema, const nlohmann::json& v, const std::string& path,
               std::vector<std::string>& errors) const
    {
        if (schema.is_boolean()) {
            if (!schema.get<bool>()) errors.push_back(path + ": no value is allowed here");
            return;
        }
        static const std::set<std::string> kAnnotations = {"$comment",    "$schema", "$id",      "format",    "title",
                                                           "description", "default", "examples", "deprecated"};
        for (const auto& [key, value] : schema.items()) {
            if (kAnnotations.count(key)) continue;
            if (key == "$ref") {
                const nlohmann::json* target = resolve(value.get<std::string>());
                if (!target) errors.push_back(path + ": unresolvable $ref " + value.get<std::string>());
                else check(*target, v, path, errors);
            } else if (key == "type") {
                bool ok = false;
                if (value.is_string()) ok = hasType(v, value.get<std::string>());
                else
                    for (const auto& t : value) ok = ok || hasType(v, t.get<std::string>());
                if (!ok) errors.push_back(path + ": expected type " + value.dump() + ", got " + v.dump());
            } else if (key == "enum") {
                bool ok = false;
                for (const auto& allowed : value) ok = ok || allowed == v;
                if (!ok) errors.push_back(path + ": " + v.dump() + " is not one of " + value.dump());
            } else if (key == "const") {
                if (value != v) errors.push_back(path + ": expected " + value.dump() + ", got " + v.dump());
            } else if (key == "required") {
                if (!v.is_object()) continue;  // applies to objects only
                for (const auto& name : value)
                    if (!v.contains(name.get<std::string>()))
                        errors.push_back(path + ": missing required member \"" + name.get<std::string>() + "\"");
            } else if (key == "properties") {
                if (!v.is_object()) continue;
                for (const auto& [name, sub] : value.items())
                    if (v.contains(name)) check(sub, v.at(name), path + "." + name, errors);
            } else if (key == "additionalProperties") {
                if (!v.is_object()) continue;
                const nlohmann::json* declared = schema.contains("properties") ? &schema["properties"] : nullptr;
                for (const auto& [name, member] : v.items())
                    if (!declared || !declared->contains(name)) check(value, member, path + "." + name, errors);
            } else if (key == "items") {
                if (!v.is_array()) continue;
                for (size_t i = 0; i < v.size(); ++i) check(value, v[i], path + "[" + std::to_string(i) + "]", errors);
            } else if (key == "anyOf") {
                std::vector<std::string> first;
                if (countMatches(value, v, path, first) == 0) {
                    errors.push_back(path + ": matches none of anyOf; first alternative says:");
                    errors.insert(errors.end(), first.begin(), first.end());
                }
            } else if (key == "oneOf") {
                std::vector<std::string> first;
                const size_t matches = countMatches(value, v, path, first);
                if (matches != 1) {
                    errors.push_back(path + ": matches " + std::to_string(matches) + " of oneOf, not exactly one");
                    errors.insert(errors.end(), first.begin(), first.end());
                }
            } else if (key == "allOf") {
                for (const auto& s : value) check(s, v, path, errors);
            } else {
                errors.push_back(path + ": the validator does not implement keyword \"" + key + "\"");
            }
        }
    }

    nlohmann::json m_bundle;
};

}  // namespace brook::testsupport
