// RandomSchemaGenerator: random JSON schemas in the subset structured outputs support (objects
// with required and optional fields, arrays with bounds, enums, consts, integers and numbers with
// bounds, strings with lengths, patterns and formats, anyOf with null, $defs references), nested
// a few levels and bounded everywhere, so a model that talks nonsense still ends every value.
#pragma once

#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

namespace brook::testsupport {

class RandomSchemaGenerator {
public:
    explicit RandomSchemaGenerator(uint32_t seed) : m_rng(seed) {}

    nlohmann::json schema()
    {
        m_defs = nlohmann::json::object();
        nlohmann::json root = object(0);
        if (!m_defs.empty()) root["$defs"] = m_defs;
        return root;
    }

private:
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(m_rng); }
    bool chance(int percent) { return pick(0, 99) < percent; }

    nlohmann::json object(int depth)
    {
        nlohmann::json s = {{"type", "object"}, {"additionalProperties", false}};
        nlohmann::json properties = nlohmann::json::object(), required = nlohmann::json::array();
        static const std::vector<std::string> names = {"id",    "name", "tags",  "value", "ok",
                                                       "items", "名字", "score", "kind"};
        const int n = pick(1, depth == 0 ? 4 : 3);
        for (int i = 0; i < n; ++i) {
            const std::string name = names[size_t(pick(0, int(names.size()) - 1))] + std::to_string(i);
            properties[name] = value(depth + 1);
            if (chance(60)) required.push_back(name);
        }
        s["properties"] = properties;
        if (!required.empty()) s["required"] = required;
        return s;
    }

    nlohmann::json value(int depth)
    {
        const int kinds = depth >= 2 ? 9 : 12;
        switch (pick(0, kinds - 1)) {
        case 0: return {{"type", "boolean"}};
        case 1: return integer();
        case 2: return number();
        case 3: {
            const int min = pick(0, 3);
            return {{"type", "string"}, {"minLength", min}, {"maxLength", min + pick(0, 8)}};
        }
        case 4: {
            static const std::vector<std::string> patterns = {
                "^[a-z]{1,6}$",    "^\\d{3}-\\d{4}$", "^(red|green|blue)$", "^[A-Z][a-z]{0,5}$",
                "^[0-9a-f]{2,8}$", "^ab?c{1,3}$",     "^[^\\s\"]{1,4}$"};
            return {{"type", "string"}, {"pattern", patterns[size_t(pick(0, int(patterns.size()) - 1))]}};
        }
        case 5: {
            nlohmann::json options = nlohmann::json::array();
            const int n = pick(1, 5);
            for (int i = 0; i < n; ++i) {
                if (chance(50)) options.push_back("opt\"" + std::to_string(pick(0, 99)));
                else options.push_back(pick(-50, 50));
            }
            return {{"enum", options}};
        }
        case 6: return {{"const", chance(50) ? nlohmann::json("fixed ✓") : nlohmann::json(pick(0, 9))}};
        case 7: return {{"anyOf", {{{"type", "null"}}, integer()}}};
        case 8: return {{"type", "string"}, {"format", chance(50) ? "date" : "uuid"}};
        case 9: {
            const int min = pick(0, 2);
            return {{"type", "array"}, {"items", value(depth + 1)}, {"minItems", min}, {"maxItems", min + pick(0, 2)}};
        }
        case 10: return object(depth);
        default: {
            const std::string name = "def" + std::to_string(m_defs.size());
            m_defs[name] = object(depth);
            return {{"$ref", "#/$defs/" + name}};
        }
        }
    }

    nlohmann::json integer()
    {
        nlohmann::json s = {{"type", "integer"}};
        const int lo = pick(-1000, 1000);
        switch (pick(0, 3)) {
        case 0: break;
        case 1: s["minimum"] = lo; break;
        case 2: s["maximum"] = lo; break;
        default: s["minimum"] = lo; s["maximum"] = lo + pick(0, 5000);
        }
        return s;
    }

    nlohmann::json number()
    {
        nlohmann::json s = {{"type", "number"}};
        const double lo = pick(-2000, 2000) / 4.0;
        switch (pick(0, 3)) {
        case 0: break;
        case 1: s["exclusiveMinimum"] = lo; break;
        case 2: s["maximum"] = lo; break;
        default: s["minimum"] = lo; s["exclusiveMaximum"] = lo + 1 + pick(0, 400) / 4.0;
        }
        return s;
    }

    std::mt19937 m_rng;
    nlohmann::json m_defs;
};

}  // namespace brook::testsupport
