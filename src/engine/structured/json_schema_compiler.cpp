#include "engine/structured/json_schema_compiler.h"

#include "engine/bounded_json.h"
#include "engine/structured/char_ranges.h"
#include "engine/structured/integer_range.h"
#include "engine/structured/regex_compiler.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <set>

namespace brook::structured {

namespace {

using Json = nlohmann::ordered_json;

// Keywords that describe and do not constrain.
const std::set<std::string> kAnnotations = {"title", "description", "default",    "examples", "$schema",
                                            "$id",   "$comment",    "deprecated", "readOnly", "writeOnly",
                                            "$defs", "definitions", "strict",     "name"};
const std::set<std::string> kSupported = {"type",
                                          "properties",
                                          "required",
                                          "additionalProperties",
                                          "items",
                                          "minItems",
                                          "maxItems",
                                          "minLength",
                                          "maxLength",
                                          "pattern",
                                          "format",
                                          "enum",
                                          "const",
                                          "anyOf",
                                          "oneOf",
                                          "allOf",
                                          "$ref",
                                          "minimum",
                                          "maximum",
                                          "exclusiveMinimum",
                                          "exclusiveMaximum",
                                          "nullable"};

// Regexes for the string formats we can generate (the value, before JSON escaping).
const std::map<std::string, std::string> kFormats = {
    {"date", R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8]))"},
    {"time", R"(([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))"},
    {"date-time",
     R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))"},
    {"uuid", R"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"},
    {"email", R"([a-zA-Z0-9_.+-]{1,64}@[a-zA-Z0-9-]{1,63}(\.[a-zA-Z0-9-]{1,63}){0,4}\.[a-zA-Z]{2,10})"},
    {"ipv4", R"(((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))"},
};

// The largest integer magnitude a bounded number grammar spells (15 digits stay exact in a double).
constexpr int64_t kMaxMagnitude = 999999999999999;

class SchemaCompiler {
public:
    SchemaCompiler(const Json& root, std::string field, const GrammarLimits& limits)
        : m_root(root), m_field(std::move(field)), m_b(limits), m_chars(m_b)
    {}

    Result<std::shared_ptr<const Grammar>> run()
    {
        auto value = this->value(m_root, 0, "$");
        if (!value) return value.failure();
        const int32_t root = m_b.newRule("root");
        m_b.addAlternative(root, {*value});
        return m_b.finish(root, m_field);
    }

    Result<std::shared_ptr<const Grammar>> anyObject()
    {
        const int32_t root = m_b.newRule("root");
        m_b.addAlternative(root, {anyJsonObject()});
        return m_b.finish(root, m_field);
    }

private:
    Error fail(const std::string& path, const std::string& what) const
    {
        return makeError(ErrorCode::InvalidArgument, m_field, "'" + m_field + "' at " + path + ": " + what);
    }
    Error unsupported(const std::string& path, const std::string& what) const
    {
        return fail(path, what + " is not supported");
    }

    GrammarSymbol ws()
    {
        if (m_ws < 0) {
            m_ws = m_b.newRule("ws");
            m_b.addAlternative(m_ws, {});
            m_b.addAlternative(m_ws, {m_b.byte(' ')});
        }
        return GrammarBuilder::ref(m_ws);
    }

    GrammarSymbol stringChar()
    {
        if (m_stringChar.rule < 0 && m_stringChar.byteSet < 0) {
            CharRanges all;
            all.add(0, kMaxCodePoint);
            m_stringChar = charSymbol(m_b, m_chars, all.complement().complement(), RegexTarget::JsonString);
        }
        return m_stringChar;
    }

    Result<GrammarSymbol> stringOfLength(int min, int max, const std::string& path)
    {
        auto body = m_b.repeat(stringChar(), min, max, m_field + " (" + path + ")");
        if (!body) return body.failure();
        const int32_t rule = m_b.newRule("string");
        m_b.addAlternative(rule, {m_b.byte('"'), GrammarBuilder::ref(*body), m_b.byte('"')});
        return GrammarBuilder::ref(rule);
    }

    GrammarSymbol literal(const Json& value) { return GrammarBuilder::ref(m_b.literalRule(value.dump())); }

    // Unbounded number pieces, as JSON spells them (digits capped so doubles stay exact).
    GrammarSymbol digits(int min, int max)
    {
        ByteSet d;
        d.addRange('0', '9');
        return GrammarBuilder::ref(*m_b.repeat(m_b.bytes(d), min, max, m_field));
    }
    GrammarSymbol unsignedInteger()
    {
        ByteSet nonZero;
        nonZero.addRange('1', '9');
        const int32_t rule = m_b.newRule("uint");
        m_b.addAlternative(rule, {m_b.byte('0')});
        m_b.addAlternative(rule, {m_b.bytes(nonZero), digits(0, 14)});
        return GrammarBuilder::ref(rule);
    }
    GrammarSymbol optional(GrammarSequence sequence)
    {
        const int32_t rule = m_b.newRule("optional");
        m_b.addAlternative(rule, std::move(sequence));
        m_b.addAlternative(rule, {});
        return GrammarBuilder::ref(rule);
    }
    GrammarSymbol fraction() { return GrammarBuilder::ref(m_b.choice({{m_b.byte('.'), digits(1, 15)}}, "fraction")); }
    GrammarSymbol anyNumber(bool integer)
    {
        GrammarSequence sequence{optional({m_b.byte('-')}), unsignedInteger()};
        if (!integer) {
            sequence.push_back(optional({fraction()}));
            ByteSet e, sign;
            e.add('e');
            e.add('E');
            sign.add('+');
            sign.add('-');
            sequence.push_back(optional({m_b.bytes(e), optional({m_b.bytes(sign)}), digits(1, 2)}));
        }
        return GrammarBuilder::ref(m_b.choice({sequence}, integer ? "integer" : "number"));
    }

    GrammarSymbol anyJsonString()
    {
        if (m_anyString < 0) m_anyString = stringOfLength(0, -1, "$")->rule;
        return GrammarBuilder::ref(m_anyString);
    }
    // Any JSON value, recursively (schema true / {}).
    GrammarSymbol anyJsonValue()
    {
        if (m_anyValue >= 0) return GrammarBuilder::ref(m_anyValue);
        m_anyValue = m_b.newRule("any-value");
        const GrammarSymbol value = GrammarBuilder::ref(m_anyValue);
        // array ::= "[" ws (value ("," ws value)*)? "]"
        const int32_t more = m_b.newRule("any-array-more");
        m_b.addAlternative(more, {m_b.byte(','), ws(), value, GrammarBuilder::ref(more)});
        m_b.addAlternative(more, {});
        const int32_t array = m_b.choice({{m_b.byte('['), ws(), m_b.byte(']')},
                                          {m_b.byte('['), ws(), value, GrammarBuilder::ref(more), m_b.byte(']')}},
                                         "any-array");
        const GrammarSymbol object = anyJsonObject();
        for (const char* word : {"true", "false", "null"})
            m_b.addAlternative(m_anyValue, {GrammarBuilder::ref(m_b.literalRule(word))});
        m_b.addAlternative(m_anyValue, {anyNumber(false)});
        m_b.addAlternative(m_anyValue, {anyJsonString()});
        m_b.addAlternative(m_anyValue, {GrammarBuilder::ref(array)});
        m_b.addAlternative(m_anyValue, {object});
        return value;
    }
    GrammarSymbol anyJsonObject()
    {
        if (m_anyObject >= 0) return GrammarBuilder::ref(m_anyObject);
        m_anyObject = m_b.newRule("any-object");
        const GrammarSymbol value = anyJsonValue();
        const GrammarSequence member{anyJsonString(), m_b.byte(':'), ws(), value};
        const int32_t more = m_b.newRule("any-object-more");
        GrammarSequence next{m_b.byte(','), ws()};
        next.insert(next.end(), member.begin(), member.end());
        next.push_back(GrammarBuilder::ref(more));
        m_b.addAlternative(more, next);
        m_b.addAlternative(more, {});
        m_b.addAlternative(m_anyObject, {m_b.byte('{'), ws(), m_b.byte('}')});
        GrammarSequence filled{m_b.byte('{'), ws()};
        filled.insert(filled.end(), member.begin(), member.end());
        filled.push_back(GrammarBuilder::ref(more));
        filled.push_back(m_b.byte('}'));
        m_b.addAlternative(m_anyObject, filled);
        return GrammarBuilder::ref(m_anyObject);
    }

    Result<GrammarSymbol> value(const Json& schema, int depth, const std::string& path)
    {
        if (depth > m_b.limits().maxNesting)
            return fail(path, "the schema nests deeper than " + std::to_string(m_b.limits().maxNesting) + " levels");
        if (m_b.overLimit()) return fail(path, "the schema builds too large a grammar");
        if (schema.is_boolean()) {
            if (schema.get<bool>()) return anyJsonValue();
            return fail(path, "the schema 'false' matches nothing");
        }
        if (!schema.is_object()) return fail(path, "a schema must be an object or a boolean");
        for (const auto& [key, unused] : schema.items())
            if (!kSupported.contains(key) && !kAnnotations.contains(key))
                return unsupported(path, "the keyword '" + key + "'");

        if (auto ref = schema.find("$ref"); ref != schema.end()) return reference(*ref, depth, path);
        if (auto c = schema.find("const"); c != schema.end()) return literal(*c);
        if (auto e = schema.find("enum"); e != schema.end()) {
            if (!e->is_array() || e->empty()) return fail(path + ".enum", "'enum' must be a non-empty array");
            if (e->size() > size_t(m_b.limits().maxRepetition))
                return fail(path + ".enum",
                            "'enum' lists more than " + std::to_string(m_b.limits().maxRepetition) + " values");
            std::vector<GrammarSequence> alternatives;
            for (const Json& option : *e) alternatives.push_back({literal(option)});
            return GrammarBuilder::ref(m_b.choice(std::move(alternatives), "enum"));
        }
        for (const char* combinator : {"anyOf", "oneOf"}) {
            if (auto list = schema.find(combinator); list != schema.end()) {
                if (!list->is_array() || list->empty())
                    return fail(path, std::string("'") + combinator + "' must be a non-empty array");
                std::vector<GrammarSequence> alternatives;
                for (size_t i = 0; i < list->size(); ++i) {
                    auto option = value((*list)[i], depth + 1, path + "." + combinator + "[" + std::to_string(i) + "]");
                    if (!option) return option.failure();
                    alternatives.push_back({*option});
                }
                return GrammarBuilder::ref(m_b.choice(std::move(alternatives), combinator));
            }
        }
        if (auto all = schema.find("allOf"); all != schema.end()) {
            if (!all->is_array() || all->size() != 1) return unsupported(path, "'allOf' with other than one schema");
            return value((*all)[0], depth + 1, path + ".allOf[0]");
        }

        std::vector<std::string> types;
        if (auto type = schema.find("type"); type != schema.end()) {
            if (type->is_string()) types.push_back(type->get<std::string>());
            else if (type->is_array())
                for (const Json& t : *type) {
                    if (!t.is_string()) return fail(path + ".type", "'type' must list strings");
                    types.push_back(t.get<std::string>());
                }
            else return fail(path + ".type", "'type' must be a string or an array of strings");
        } else if (schema.contains("properties") || schema.contains("additionalProperties") ||
                   schema.contains("required")) {
            types.push_back("object");
        } else if (schema.contains("items") || schema.contains("minItems") || schema.contains("maxItems")) {
            types.push_back("array");
        } else if (schema.contains("pattern") || schema.contains("format") || schema.contains("minLength") ||
                   schema.contains("maxLength")) {
            types.push_back("string");
        } else if (schema.contains("minimum") || schema.contains("maximum") || schema.contains("exclusiveMinimum") ||
                   schema.contains("exclusiveMaximum")) {
            types.push_back("number");
        } else {
            return anyJsonValue();
        }
        if (schema.value("nullable", false)) types.push_back("null");
        std::vector<GrammarSequence> alternatives;
        for (const std::string& type : types) {
            auto one = typed(schema, type, depth, path);
            if (!one) return one.failure();
            alternatives.push_back({*one});
        }
        if (alternatives.size() == 1) return alternatives[0][0];
        return GrammarBuilder::ref(m_b.choice(std::move(alternatives), "types"));
    }

    Result<GrammarSymbol> reference(const Json& ref, int depth, const std::string& path)
    {
        if (!ref.is_string()) return fail(path + ".$ref", "'$ref' must be a string");
        const std::string target = ref.get<std::string>();
        if (auto it = m_refs.find(target); it != m_refs.end()) return GrammarBuilder::ref(it->second);
        const Json* schema = nullptr;
        if (target == "#") {
            schema = &m_root;
        } else {
            for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
                const std::string p = prefix;
                if (target.rfind(p, 0) != 0) continue;
                const std::string section = p.substr(2, p.size() - 3);
                const std::string name = target.substr(p.size());
                if (m_root.is_object() && m_root.contains(section) && m_root[section].is_object() &&
                    m_root[section].contains(name))
                    schema = &m_root[section][name];
            }
        }
        if (!schema)
            return unsupported(path + ".$ref",
                               "the reference '" + target + "' (only #, #/$defs/NAME and #/definitions/NAME)");
        // The rule exists before its body so a schema can refer to itself (trees, lists).
        const int32_t rule = m_b.newRule("ref " + target);
        m_refs.emplace(target, rule);
        auto body = value(*schema, depth + 1, target);
        if (!body) return body.failure();
        m_b.addAlternative(rule, {*body});
        return GrammarBuilder::ref(rule);
    }

    Result<int> readCount(const Json& schema, const char* key, int fallback, const std::string& path)
    {
        auto it = schema.find(key);
        if (it == schema.end()) return fallback;
        if (!it->is_number_integer() && !(it->is_number() && std::trunc(it->get<double>()) == it->get<double>()))
            return fail(path + "." + key, std::string("'") + key + "' must be a non-negative integer");
        const double v = it->get<double>();
        if (v < 0) return fail(path + "." + key, std::string("'") + key + "' must be a non-negative integer");
        if (v > m_b.limits().maxRepetition)
            return fail(path + "." + key, std::string("'") + key + "' above " +
                                              std::to_string(m_b.limits().maxRepetition) + " is not supported");
        return int(v);
    }

    Result<GrammarSymbol> typed(const Json& schema, const std::string& type, int depth, const std::string& path)
    {
        if (type == "null") return literal(nullptr);
        if (type == "boolean") return GrammarBuilder::ref(m_b.choice({{literal(true)}, {literal(false)}}, "boolean"));
        if (type == "string") return string(schema, path);
        if (type == "integer" || type == "number") return number(schema, type == "integer", path);
        if (type == "array") return array(schema, depth, path);
        if (type == "object") return object(schema, depth, path);
        return fail(path + ".type", "unknown type '" + type + "'");
    }

    Result<GrammarSymbol> string(const Json& schema, const std::string& path)
    {
        auto min = readCount(schema, "minLength", 0, path);
        if (!min) return min.failure();
        auto max = readCount(schema, "maxLength", -1, path);
        if (!max) return max.failure();
        if (*max >= 0 && *max < *min) return fail(path, "'maxLength' is below 'minLength'");
        std::string pattern;
        if (auto p = schema.find("pattern"); p != schema.end()) {
            if (!p->is_string()) return fail(path + ".pattern", "'pattern' must be a string");
            pattern = p->get<std::string>();
        }
        if (auto f = schema.find("format"); f != schema.end()) {
            if (!f->is_string()) return fail(path + ".format", "'format' must be a string");
            auto known = kFormats.find(f->get<std::string>());
            if (known == kFormats.end())
                return unsupported(path + ".format", "the format '" + f->get<std::string>() + "'");
            if (!pattern.empty()) return unsupported(path, "'format' together with 'pattern'");
            pattern = known->second;
        }
        if (pattern.empty()) return stringOfLength(*min, *max, path);
        if (schema.contains("minLength") || schema.contains("maxLength"))
            return unsupported(path, "'minLength' or 'maxLength' together with 'pattern' or 'format'");
        auto body = compileRegex(m_b, m_chars, pattern, RegexTarget::JsonString, m_field + " (" + path + ".pattern)");
        if (!body) return body.failure();
        const int32_t rule = m_b.newRule("pattern-string");
        m_b.addAlternative(rule, {m_b.byte('"'), GrammarBuilder::ref(*body), m_b.byte('"')});
        return GrammarBuilder::ref(rule);
    }

    // A bound, read as the inclusive integer limit it implies for the grammar's values.
    Result<std::optional<int64_t>> bound(const Json& schema, bool lower, const std::string& path)
    {
        std::optional<int64_t> result;
        for (const char* key :
             lower ? std::array{"minimum", "exclusiveMinimum"} : std::array{"maximum", "exclusiveMaximum"}) {
            auto it = schema.find(key);
            if (it == schema.end()) continue;
            if (!it->is_number()) return fail(path + "." + key, std::string("'") + key + "' must be a number");
            const double v = it->get<double>();
            if (!std::isfinite(v) || std::fabs(v) > double(kMaxMagnitude))
                return unsupported(path + "." + key,
                                   std::string("'") + key + "' beyond ±" + std::to_string(kMaxMagnitude));
            const bool exclusive = key[0] == 'e';
            // Rounded inward: the values allowed are a subset of the schema's, all valid.
            int64_t limit = lower ? int64_t(exclusive ? std::floor(v) + 1 : std::ceil(v))
                                  : int64_t(exclusive ? std::ceil(v) - 1 : std::floor(v));
            result = result ? (lower ? std::max(*result, limit) : std::min(*result, limit)) : limit;
        }
        return result;
    }

    Result<GrammarSymbol> number(const Json& schema, bool integer, const std::string& path)
    {
        auto lo = bound(schema, true, path);
        if (!lo) return lo.failure();
        auto hi = bound(schema, false, path);
        if (!hi) return hi.failure();
        if (!*lo && !*hi) return anyNumber(integer);
        const int64_t low = lo->value_or(-kMaxMagnitude), high = hi->value_or(kMaxMagnitude);
        if (low > high) return fail(path, "the bounds leave no " + std::string(integer ? "integer" : "number"));
        std::vector<GrammarSequence> alternatives;
        if (integer) {
            for (GrammarSequence& s : integerRange(m_b, low, high)) alternatives.push_back(std::move(s));
        } else {
            // x = v + f (v >= 0) or v - f (v <= -1), f a fraction in [0, 1): any fraction keeps x in
            // range for v in [max(low, 0), high - 1] and [low + 1, min(high, -1)]; at v = high >= 0
            // and v = low <= -1 only zeros may follow the point.
            const GrammarSymbol anyFraction = optional({fraction()});
            const GrammarSymbol zeroFraction =
                optional({m_b.byte('.'), GrammarBuilder::ref(*m_b.repeat(m_b.byte('0'), 1, 15, m_field))});
            auto add = [&](int64_t a, int64_t b, GrammarSymbol tail) {
                if (a > b) return;
                for (GrammarSequence& s : integerRange(m_b, a, b)) {
                    s.push_back(tail);
                    alternatives.push_back(std::move(s));
                }
            };
            add(std::max<int64_t>(low, 0), high - 1, anyFraction);
            add(low + 1, std::min<int64_t>(high, -1), anyFraction);
            if (high >= 0) add(high, high, zeroFraction);
            if (low <= -1) add(low, low, zeroFraction);
        }
        return GrammarBuilder::ref(m_b.choice(std::move(alternatives), integer ? "integer-range" : "number-range"));
    }

    Result<GrammarSymbol> array(const Json& schema, int depth, const std::string& path)
    {
        GrammarSymbol item = anyJsonValue();
        if (auto items = schema.find("items"); items != schema.end()) {
            auto compiled = value(*items, depth + 1, path + ".items");
            if (!compiled) return compiled.failure();
            item = *compiled;
        }
        auto min = readCount(schema, "minItems", 0, path);
        if (!min) return min.failure();
        auto max = readCount(schema, "maxItems", -1, path);
        if (!max) return max.failure();
        if (*max >= 0 && *max < *min) return fail(path, "'maxItems' is below 'minItems'");
        const int32_t rule = m_b.newRule("array");
        if (*max != 0) {
            // "[" ws item ("," ws item){min-1, max-1} "]"
            const int32_t next = m_b.choice({{m_b.byte(','), ws(), item}}, "array-next");
            auto rest = m_b.repeat(GrammarBuilder::ref(next), std::max(*min - 1, 0), *max < 0 ? -1 : *max - 1,
                                   m_field + " (" + path + ")");
            if (!rest) return rest.failure();
            m_b.addAlternative(rule, {m_b.byte('['), ws(), item, GrammarBuilder::ref(*rest), m_b.byte(']')});
        }
        if (*min == 0) m_b.addAlternative(rule, {m_b.byte('['), ws(), m_b.byte(']')});
        return GrammarBuilder::ref(rule);
    }

    Result<GrammarSymbol> object(const Json& schema, int depth, const std::string& path)
    {
        const auto properties = schema.find("properties");
        const auto additional = schema.find("additionalProperties");
        std::set<std::string> required;
        if (auto r = schema.find("required"); r != schema.end()) {
            if (!r->is_array()) return fail(path + ".required", "'required' must be an array of names");
            for (const Json& name : *r) {
                if (!name.is_string()) return fail(path + ".required", "'required' must be an array of names");
                required.insert(name.get<std::string>());
            }
        }
        const bool hasProperties = properties != schema.end() && properties->is_object() && !properties->empty();
        if (properties != schema.end() && !properties->is_object())
            return fail(path + ".properties", "'properties' must be an object");
        for (const std::string& name : required)
            if (!hasProperties || !properties->contains(name))
                return unsupported(path + ".required",
                                   "a required property ('" + name + "') without a schema in 'properties'");

        if (!hasProperties) {
            // A map: no listed keys, values by additionalProperties (absent or true: any value).
            if (additional != schema.end() && additional->is_boolean() && !additional->get<bool>())
                return literal(Json::object());
            GrammarSymbol valueSymbol = anyJsonValue();
            if (additional != schema.end() && !additional->is_boolean()) {
                auto compiled = value(*additional, depth + 1, path + ".additionalProperties");
                if (!compiled) return compiled.failure();
                valueSymbol = *compiled;
            }
            GrammarSequence member{anyJsonString(), m_b.byte(':'), ws(), valueSymbol};
            GrammarSequence next{m_b.byte(','), ws()};
            next.insert(next.end(), member.begin(), member.end());
            auto more = m_b.repeat(GrammarBuilder::ref(m_b.choice({next}, "map-next")), 0, -1, m_field);
            GrammarSequence filled{m_b.byte('{'), ws()};
            filled.insert(filled.end(), member.begin(), member.end());
            filled.push_back(GrammarBuilder::ref(*more));
            filled.push_back(m_b.byte('}'));
            return GrammarBuilder::ref(m_b.choice({{m_b.byte('{'), ws(), m_b.byte('}')}, filled}, "map"));
        }

        // Listed properties in the schema's order; extra keys are never produced (a subset of what
        // additionalProperties allows, so always valid). after[i][emitted]: the members from the
        // i-th on, given whether one was already written (then each starts with ",").
        std::vector<GrammarSequence> members;
        std::vector<bool> isRequired;
        for (const auto& [name, propertySchema] : properties->items()) {
            auto compiled = value(propertySchema, depth + 1, path + ".properties." + name);
            if (!compiled) return compiled.failure();
            GrammarSequence member{literal(Json(name)), m_b.byte(':'), ws(), *compiled};
            members.push_back(std::move(member));
            isRequired.push_back(required.contains(name));
        }
        const size_t n = members.size();
        std::vector<std::array<int32_t, 2>> after(n + 1);
        after[n] = {m_b.newRule("members-end"), m_b.newRule("members-end")};
        m_b.addAlternative(after[n][0], {});
        m_b.addAlternative(after[n][1], {});
        for (size_t i = n; i-- > 0;) {
            after[i] = {m_b.newRule("members"), m_b.newRule("members")};
            for (int emitted = 0; emitted < 2; ++emitted) {
                GrammarSequence with;
                if (emitted) {
                    with.push_back(m_b.byte(','));
                    with.push_back(ws());
                }
                with.insert(with.end(), members[i].begin(), members[i].end());
                with.push_back(GrammarBuilder::ref(after[i + 1][1]));
                m_b.addAlternative(after[i][size_t(emitted)], std::move(with));
                if (!isRequired[i])
                    m_b.addAlternative(after[i][size_t(emitted)], {GrammarBuilder::ref(after[i + 1][size_t(emitted)])});
            }
        }
        return GrammarBuilder::ref(
            m_b.choice({{m_b.byte('{'), ws(), GrammarBuilder::ref(after[0][0]), m_b.byte('}')}}, "object"));
    }

    const Json& m_root;
    std::string m_field;
    GrammarBuilder m_b;
    CharRuleCache m_chars;
    std::map<std::string, int32_t> m_refs;
    int32_t m_ws = -1;
    int32_t m_anyValue = -1;
    int32_t m_anyObject = -1;
    int32_t m_anyString = -1;
    GrammarSymbol m_stringChar;
};

}  // namespace

Result<std::shared_ptr<const Grammar>> compileJsonSchema(std::string_view schemaText, const std::string& field,
                                                         const GrammarLimits& limits)
{
    if (schemaText.size() > limits.maxInputBytes)
        return makeError(ErrorCode::InvalidArgument, field,
                         "'" + field + "' is larger than " + std::to_string(limits.maxInputBytes) + " bytes");
    if (jsonNestingDepth(schemaText, limits.maxNesting * 2) > limits.maxNesting * 2)
        return makeError(ErrorCode::InvalidArgument, field,
                         "'" + field + "' nests deeper than " + std::to_string(limits.maxNesting * 2) + " levels");
    Json schema = Json::parse(schemaText, nullptr, false);
    if (schema.is_discarded()) return makeError(ErrorCode::InvalidArgument, field, "'" + field + "' is not valid JSON");
    return SchemaCompiler(schema, field, limits).run();
}

Result<std::shared_ptr<const Grammar>> compileAnyJsonObject(const GrammarLimits& limits)
{
    const Json empty = Json::object();
    return SchemaCompiler(empty, "response_format", limits).anyObject();
}

}  // namespace brook::structured
