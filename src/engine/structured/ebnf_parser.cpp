#include "engine/structured/ebnf_parser.h"

#include "engine/structured/char_ranges.h"
#include "engine/structured/regex_compiler.h"

#include <cctype>
#include <set>

namespace brook::structured {

namespace {

bool isNameChar(char c) { return std::isalnum(uint8_t(c)) || c == '_' || c == '-'; }

class EbnfParser {
public:
    EbnfParser(std::string_view text, std::string field, const GrammarLimits& limits)
        : m_t(text), m_field(std::move(field)), m_b(limits), m_chars(m_b)
    {}

    Result<std::shared_ptr<const Grammar>> run()
    {
        if (m_t.size() > m_b.limits().maxInputBytes) return fail("the grammar is larger than the limit");
        skipSpace(true);
        while (m_i < m_t.size()) {
            const std::string name = this->name();
            if (name.empty()) return fail("a rule name was expected");
            skipSpace(false);
            if (m_t.substr(m_i, 3) != "::=") return fail("'::=' was expected after '" + name + "'");
            m_i += 3;
            if (m_defined.contains(name)) return fail("the rule '" + name + "' is defined twice");
            m_defined.insert(name);
            const int32_t rule = m_b.ruleNamed(name);
            auto body = alternatives(0);
            if (!body) return body.failure();
            for (GrammarSequence& s : *body) m_b.addAlternative(rule, std::move(s));
            skipSpace(true);
        }
        if (!m_defined.contains("root")) return fail("the grammar has no 'root' rule");
        for (const std::string& used : m_used)
            if (!m_defined.contains(used))
                return makeError(ErrorCode::InvalidArgument, m_field,
                                 "'" + m_field + "': the rule '" + used + "' is used but not defined");
        return m_b.finish(m_b.ruleNamed("root"), m_field);
    }

private:
    Error fail(const std::string& what) const
    {
        size_t line = 1;
        for (size_t k = 0; k < m_i && k < m_t.size(); ++k) line += m_t[k] == '\n';
        return makeError(ErrorCode::InvalidArgument, m_field,
                         "'" + m_field + "': " + what + " (line " + std::to_string(line) + ")");
    }

    // Spaces and comments; newlines too unless a rule body is being read (a newline then ends
    // the body only when the next line starts a new rule, see atRuleStart).
    void skipSpace(bool newlines)
    {
        while (m_i < m_t.size()) {
            const char c = m_t[m_i];
            if (c == '#') {
                while (m_i < m_t.size() && m_t[m_i] != '\n') ++m_i;
            } else if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
                ++m_i;
            } else {
                break;
            }
        }
    }
    // At "name ::=": a new rule starts here.
    bool atRuleStart() const
    {
        size_t j = m_i;
        while (j < m_t.size() && isNameChar(m_t[j])) ++j;
        if (j == m_i) return false;
        while (j < m_t.size() && (m_t[j] == ' ' || m_t[j] == '\t')) ++j;
        return m_t.substr(j, 3) == "::=";
    }
    std::string name()
    {
        const size_t start = m_i;
        while (m_i < m_t.size() && isNameChar(m_t[m_i])) ++m_i;
        return std::string(m_t.substr(start, m_i - start));
    }

    Result<std::vector<GrammarSequence>> alternatives(int depth)
    {
        if (depth > m_b.limits().maxNesting) return fail("groups nested too deeply");
        std::vector<GrammarSequence> out;
        for (;;) {
            auto sequence = this->sequence(depth);
            if (!sequence) return sequence.failure();
            out.push_back(std::move(sequence).value());
            skipSpace(true);
            if (m_i < m_t.size() && m_t[m_i] == '|') {
                ++m_i;
                continue;
            }
            return out;
        }
    }

    Result<GrammarSequence> sequence(int depth)
    {
        GrammarSequence out;
        for (;;) {
            skipSpace(true);
            if (m_i >= m_t.size() || m_t[m_i] == '|' || m_t[m_i] == ')' || atRuleStart()) return out;
            auto symbol = primary(depth);
            if (!symbol) return symbol.failure();
            GrammarSymbol s = *symbol;
            while (m_i < m_t.size()) {
                int min = 0, max = -1;
                const char c = m_t[m_i];
                if (c == '*') {
                    ++m_i;
                } else if (c == '+') {
                    min = 1;
                    ++m_i;
                } else if (c == '?') {
                    max = 1;
                    ++m_i;
                } else if (c == '{') {
                    const size_t close = m_t.find('}', m_i);
                    if (close == std::string_view::npos) return fail("a missing '}'");
                    const std::string inside(m_t.substr(m_i + 1, close - m_i - 1));
                    const size_t comma = inside.find(',');
                    try {
                        min = std::stoi(inside.substr(0, comma));
                        max = comma == std::string::npos   ? min
                              : comma + 1 == inside.size() ? -1
                                                           : std::stoi(inside.substr(comma + 1));
                    } catch (const std::exception&) {
                        return fail("a bad {n,m} quantifier");
                    }
                    if (min < 0 || (max >= 0 && max < min)) return fail("a bad {n,m} quantifier");
                    m_i = close + 1;
                } else {
                    break;
                }
                auto repeated = m_b.repeat(s, min, max, m_field);
                if (!repeated) return repeated.failure();
                s = GrammarBuilder::ref(*repeated);
            }
            out.push_back(s);
            if (m_b.overLimit()) return fail("the grammar is too large");
        }
    }

    Result<GrammarSymbol> primary(int depth)
    {
        const char c = m_t[m_i];
        if (c == '"') return stringLiteral();
        if (c == '[' || c == '.') {
            size_t end = m_i + 1;
            if (c == '[') {
                if (end < m_t.size() && m_t[end] == '^') ++end;
                if (end < m_t.size() && m_t[end] == ']') ++end;
                while (end < m_t.size() && m_t[end] != ']') end += m_t[end] == '\\' ? 2 : 1;
                if (end >= m_t.size()) return fail("a missing ']'");
                ++end;
            }
            auto rule = compileRegex(m_b, m_chars, m_t.substr(m_i, end - m_i), RegexTarget::Raw, m_field);
            if (!rule) return rule.failure();
            m_i = end;
            return GrammarBuilder::ref(*rule);
        }
        if (c == '(') {
            ++m_i;
            auto inner = alternatives(depth + 1);
            if (!inner) return inner.failure();
            if (m_i >= m_t.size() || m_t[m_i] != ')') return fail("a missing ')'");
            ++m_i;
            return GrammarBuilder::ref(m_b.choice(std::move(inner).value(), "group"));
        }
        if (isNameChar(c)) {
            const std::string name = this->name();
            m_used.insert(name);
            return GrammarBuilder::ref(m_b.ruleNamed(name));
        }
        return fail(std::string("unexpected '") + c + "'");
    }

    Result<GrammarSymbol> stringLiteral()
    {
        ++m_i;
        std::string value;
        while (m_i < m_t.size() && m_t[m_i] != '"') {
            if (m_t[m_i] != '\\') {
                value += m_t[m_i++];
                continue;
            }
            if (++m_i >= m_t.size()) break;
            const char e = m_t[m_i++];
            switch (e) {
            case 'n': value += '\n'; break;
            case 't': value += '\t'; break;
            case 'r': value += '\r'; break;
            case 'x':
            case 'u': {
                const size_t width = e == 'x' ? 2 : 4;
                if (m_i + width > m_t.size()) return fail("a bad escape");
                uint32_t code = 0;
                for (size_t k = 0; k < width; ++k) {
                    const char h = m_t[m_i++];
                    if (!std::isxdigit(uint8_t(h))) return fail("a bad escape");
                    code = code * 16 + uint32_t(std::isdigit(uint8_t(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
                }
                appendUtf8(value, code);
                break;
            }
            default: value += e;
            }
        }
        if (m_i >= m_t.size()) return fail("an unterminated string");
        ++m_i;
        return GrammarBuilder::ref(m_b.literalRule(value));
    }

    std::string_view m_t;
    std::string m_field;
    GrammarBuilder m_b;
    CharRuleCache m_chars;
    size_t m_i = 0;
    std::set<std::string> m_defined, m_used;
};

}  // namespace

Result<std::shared_ptr<const Grammar>> compileEbnf(std::string_view text, const std::string& field,
                                                   const GrammarLimits& limits)
{
    return EbnfParser(text, field, limits).run();
}

}  // namespace brook::structured
