// JsonSchemaChecker: validates a JSON instance against the JSON-Schema keywords the random
// schema generator uses, written independently of the grammar compiler it checks: type, enum,
// const, properties / required / additionalProperties, items / minItems / maxItems, minimum /
// maximum / exclusiveMinimum / exclusiveMaximum, minLength / maxLength (in code points), pattern
// (std::regex, ECMAScript search as JSON Schema defines it), format (date, uuid), anyOf and $ref
// into $defs. Any other keyword is an error, so a generator change cannot go unchecked.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

namespace brook::testsupport {

class JsonSchemaChecker {
public:
    explicit JsonSchemaChecker(nlohmann::json root) : m_root(std::move(root)) {}

    std::vector<std::string> check(const nlohmann::json& instance) const
    {
        std::vector<std::string> errors;
        check(m_root, instance, "$", errors);
        return errors;
    }

private:
    static size_t codePoints(const std::string& s)
    {
        size_t n = 0;
        for (unsigned char c : s) n += (c & 0xC0) != 0x80;
        return n;
    }
    // std::regex reads bytes; JSON Schema counts characters: match on UTF-32.
    static std::wstring wide(const std::string& s)
    {
        std::wstring out;
        for (size_t i = 0; i < s.size();) {
            const auto b = static_cast<unsigned char>(s[i]);
            const int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
            uint32_t c = n == 1 ? b : b & (0x7F >> n);
            for (int k = 1; k < n && i + size_t(k) < s.size(); ++k)
                c = (c << 6) | (static_cast<unsigned char>(s[i + size_t(k)]) & 0x3F);
            out += wchar_t(c);
            i += size_t(n);
        }
        return out;
    }
    static bool hasType(const nlohmann::json& v, const std::string& type)
    {
        if (type == "null") return v.is_null();
        if (type == "boolean") return v.is_boolean();
        if (type == "string") return v.is_string();
        if (type == "array") return v.is_array();
        if (type == "object") return v.is_object();
        if (type == "number") return v.is_number();
        if (type == "integer")
            return v.is_number_integer() || (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>());
        return false;
    }

    void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& path,
               std::vector<std::string>& errors) const
    {
        auto fail = [&](const std::string& what) { errors.push_back(path + ": " + what); };
        for (const auto& [key, unused] : s.items()) {
            static const std::vector<std::string> known = {"type",
                                                           "enum",
                                                           "const",
                                                           "properties",
                                                           "required",
                                                           "additionalProperties",
                                                           "items",
                                                           "minItems",
                                                           "maxItems",
                                                           "minimum",
                                                           "maximum",
                                                           "exclusiveMinimum",
                                                           "exclusiveMaximum",
                                                           "minLength",
                                                           "maxLength",
                                                           "pattern",
                                                           "format",
                                                           "anyOf",
                                                           "$ref",
                                                           "$defs",
                                                           "description"};
            if (std::find(known.begin(), known.end(), key) == known.end()) fail("unchecked keyword " + key);
        }
        if (s.contains("$ref")) {
            const std::string ref = s["$ref"];
            check(m_root["$defs"][ref.substr(std::string("#/$defs/").size())], v, path, errors);
        }
        if (s.contains("type") && !hasType(v, s["type"].get<std::string>()))
            fail("not of type " + s["type"].get<std::string>() + ": " + v.dump());
        if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end())
            fail("not in enum: " + v.dump());
        if (s.contains("const") && s["const"] != v) fail("not the const: " + v.dump());
        if (s.contains("anyOf")) {
            bool any = false;
            for (const auto& option : s["anyOf"]) {
                std::vector<std::string> sub;
                check(option, v, path, sub);
                any = any || sub.empty();
            }
            if (!any) fail("matches no anyOf option: " + v.dump());
        }
        if (v.is_object()) {
            if (s.contains("required"))
                for (const auto& name : s["required"])
                    if (!v.contains(name.get<std::string>())) fail("lacks required " + name.get<std::string>());
            for (const auto& [key, value] : v.items()) {
                if (s.contains("properties") && s["properties"].contains(key))
                    check(s["properties"][key], value, path + "." + key, errors);
                else if (s.contains("additionalProperties") && s["additionalProperties"] == false)
                    fail("has additional property " + key);
            }
        }
        if (v.is_array()) {
            if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) fail("too few items");
            if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) fail("too many items");
            if (s.contains("items"))
                for (size_t i = 0; i < v.size(); ++i)
                    check(s["items"], v[i], path + "[" + std::to_string(i) + "]", errors);
        }
        if (v.is_number()) {
            const double x = v.get<double>();
            if (s.contains("minimum") && x < s["minimum"].get<double>()) fail("below minimum: " + v.dump());
            if (s.contains("maximum") && x > s["maximum"].get<double>()) fail("above maximum: " + v.dump());
            if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>())
                fail("not above exclusiveMinimum");
            if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>())
                fail("not below exclusiveMaximum");
        }
        if (v.is_string()) {
            const std::string text = v.get<std::string>();
            if (s.contains("minLength") && codePoints(text) < s["minLength"].get<size_t>())
                fail("too short: " + v.dump());
            if (s.contains("maxLength") && codePoints(text) > s["maxLength"].get<size_t>())
                fail("too long: " + v.dump());
            if (s.contains("pattern") &&
                !std::regex_search(wide(text), std::wregex(wide(s["pattern"].get<std::string>()))))
                fail("does not match pattern " + s["pattern"].get<std::string>() + ": " + v.dump());
            if (s.contains("format")) {
                const std::string format = s["format"];
                const char* re = format == "date" ? "^\\d{4}-\\d{2}-\\d{2}$"
                                 : format == "uuid"
                                     ? "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
                                     : nullptr;
                if (!re) fail("unchecked format " + format);
                else if (!std::regex_search(text, std::regex(re))) fail("not a " + format + ": " + v.dump());
            }
        }
    }

    nlohmann::json m_root;
};

}  // namespace brook::testsupport
