#include "engine/structured/regex_compiler.h"

#include <optional>

namespace brook::structured {

namespace {

CharRanges digits()
{
    CharRanges s;
    s.add('0', '9');
    return s;
}
CharRanges wordChars()
{
    CharRanges s;
    s.add('a', 'z');
    s.add('A', 'Z');
    s.add('0', '9');
    s.add('_');
    return s;
}
CharRanges spaces()
{
    CharRanges s;
    for (uint32_t c : {' ', '\t', '\n', '\r', '\f', '\v'}) s.add(c);
    return s;
}

class RegexParser {
public:
    RegexParser(GrammarBuilder& builder, CharRuleCache& chars, std::string_view pattern, RegexTarget target,
                std::string field)
        : m_b(builder), m_chars(chars), m_p(pattern), m_target(target), m_field(std::move(field))
    {}

    Result<int32_t> run()
    {
        if (m_p.size() > m_b.limits().maxInputBytes) return fail("the pattern is longer than the limit");
        if (!m_p.empty() && m_p.front() == '^') ++m_i;
        auto rule = alternation(0);
        if (!rule) return rule;
        if (m_i < m_p.size()) return fail(m_p[m_i] == ')' ? "unbalanced ')'" : "unexpected character");
        return rule;
    }

private:
    Error fail(const std::string& what) const
    {
        return makeError(ErrorCode::InvalidArgument, m_field,
                         "'" + m_field + "': " + what + " at offset " + std::to_string(m_i) + " of the pattern");
    }
    Error unsupported(const std::string& what) const
    {
        return makeError(ErrorCode::InvalidArgument, m_field,
                         "'" + m_field + "': " + what + " (offset " + std::to_string(m_i) +
                             ") is not supported in patterns");
    }
    bool atEnd() const { return m_i >= m_p.size(); }
    char peek() const { return m_p[m_i]; }
    // `$` counts as the end when it is the pattern's last character.
    bool atFinalDollar() const
    {
        return m_i + 1 == m_p.size() && m_p[m_i] == '$' && (m_i == 0 || m_p[m_i - 1] != '\\');
    }

    Result<int32_t> alternation(int depth)
    {
        if (depth > m_b.limits().maxNesting) return fail("groups nested too deeply");
        std::vector<GrammarSequence> alternatives;
        for (;;) {
            auto sequence = concatenation(depth);
            if (!sequence) return sequence.failure();
            alternatives.push_back(std::move(sequence).value());
            if (atEnd() || peek() != '|') break;
            ++m_i;
        }
        return m_b.choice(std::move(alternatives), "regex");
    }

    Result<GrammarSequence> concatenation(int depth)
    {
        GrammarSequence sequence;
        while (!atEnd() && peek() != '|' && peek() != ')') {
            if (atFinalDollar()) {
                ++m_i;
                break;
            }
            auto atom = this->atom(depth);
            if (!atom) return atom.failure();
            GrammarSymbol symbol = *atom;
            // Quantifiers (several in a row apply in turn: a{2}{3}).
            while (!atEnd()) {
                int min = 0, max = -1;
                const char c = peek();
                if (c == '*') {
                    ++m_i;
                } else if (c == '+') {
                    min = 1;
                    ++m_i;
                } else if (c == '?') {
                    max = 1;
                    ++m_i;
                } else if (c == '{' && isBraceQuantifier()) {
                    auto bounds = braces();
                    if (!bounds) return bounds.failure();
                    min = bounds->first;
                    max = bounds->second;
                } else {
                    break;
                }
                if (!atEnd() && peek() == '?') ++m_i;  // lazy: the same strings
                else if (!atEnd() && peek() == '+') return unsupported("a possessive quantifier");
                auto repeated = m_b.repeat(symbol, min, max, m_field);
                if (!repeated) return repeated.failure();
                symbol = GrammarBuilder::ref(*repeated);
            }
            sequence.push_back(symbol);
            if (m_b.overLimit()) return fail("the pattern builds too large a grammar");
        }
        return sequence;
    }

    bool isBraceQuantifier() const
    {
        size_t j = m_i + 1;
        bool any = false;
        while (j < m_p.size() && (std::isdigit(uint8_t(m_p[j])) || m_p[j] == ',')) {
            any = any || std::isdigit(uint8_t(m_p[j]));
            ++j;
        }
        return any && j < m_p.size() && m_p[j] == '}' && std::isdigit(uint8_t(m_p[m_i + 1]));
    }

    Result<std::pair<int, int>> braces()
    {
        ++m_i;  // {
        auto number = [&]() -> std::optional<int> {
            long value = 0;
            const size_t start = m_i;
            while (!atEnd() && std::isdigit(uint8_t(peek()))) {
                value = std::min<long>(value * 10 + (peek() - '0'), 1L << 30);
                ++m_i;
            }
            if (m_i == start) return std::nullopt;
            return int(value);
        };
        const auto min = number();
        int max = *min;
        if (peek() == ',') {
            ++m_i;
            max = peek() == '}' ? -1 : number().value_or(-1);
        }
        ++m_i;  // }
        if (max >= 0 && max < *min) return fail("a quantifier {n,m} with m < n");
        return std::pair{*min, max};
    }

    Result<GrammarSymbol> atom(int depth)
    {
        const char c = peek();
        if (c == '(') {
            ++m_i;
            if (!atEnd() && peek() == '?') {
                if (m_i + 1 < m_p.size() && m_p[m_i + 1] == ':') {
                    m_i += 2;
                } else if (m_p.substr(m_i, 2) == "?<" && m_i + 2 < m_p.size() && m_p[m_i + 2] != '=' &&
                           m_p[m_i + 2] != '!') {
                    const size_t close = m_p.find('>', m_i);
                    if (close == std::string_view::npos) return fail("an unterminated group name");
                    m_i = close + 1;
                } else if (m_p.substr(m_i, 3) == "?P<") {
                    const size_t close = m_p.find('>', m_i);
                    if (close == std::string_view::npos) return fail("an unterminated group name");
                    m_i = close + 1;
                } else {
                    return unsupported("lookaround or a group flag '(?'");
                }
            }
            auto inner = alternation(depth + 1);
            if (!inner) return inner.failure();
            if (atEnd() || peek() != ')') return fail("a missing ')'");
            ++m_i;
            return GrammarBuilder::ref(*inner);
        }
        if (c == '[') return charClass();
        if (c == '.') {
            ++m_i;
            CharRanges newline;
            newline.add('\n');
            return symbolFor(newline.complement());
        }
        if (c == '^') return unsupported("'^' inside the pattern");
        if (c == '$') return unsupported("'$' inside the pattern");
        if (c == '*' || c == '+' || c == '?') return fail("a quantifier with nothing to repeat");
        if (c == ')') return fail("unbalanced ')'");
        if (c == '\\') {
            auto set = escape(false);
            if (!set) return set.failure();
            return symbolFor(*set);
        }
        CharRanges one;
        one.add(decodeUtf8(m_p, m_i));
        return symbolFor(one);
    }

    Result<GrammarSymbol> symbolFor(const CharRanges& set)
    {
        if (set.empty()) return fail("a character class that matches nothing");
        const GrammarSymbol symbol = charSymbol(m_b, m_chars, set, m_target);
        if (symbol.rule >= 0 && m_b.numAlternatives(symbol.rule) == 0)
            return fail("a character class that no JSON string can hold");
        return symbol;
    }

    // After a backslash (m_i at it). inClass: \b means backspace there.
    Result<CharRanges> escape(bool inClass)
    {
        ++m_i;
        if (atEnd()) return fail("a trailing backslash");
        const char c = m_p[m_i++];
        CharRanges s;
        switch (c) {
        case 'd': return digits();
        case 'D': return digits().complement();
        case 'w': return wordChars();
        case 'W': return wordChars().complement();
        case 's': return spaces();
        case 'S': return spaces().complement();
        case 'n': s.add('\n'); return s;
        case 't': s.add('\t'); return s;
        case 'r': s.add('\r'); return s;
        case 'f': s.add('\f'); return s;
        case 'v': s.add('\v'); return s;
        case '0': s.add(0); return s;
        case 'x':
        case 'u': {
            const size_t width = c == 'x' ? 2 : 4;
            uint32_t value = 0;
            for (size_t k = 0; k < width; ++k) {
                if (atEnd() || !std::isxdigit(uint8_t(peek()))) return fail("a bad \\" + std::string(1, c) + " escape");
                const char h = m_p[m_i++];
                value = value * 16 + uint32_t(std::isdigit(uint8_t(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
            }
            s.add(value);
            return s;
        }
        case 'b':
            if (inClass) {
                s.add('\b');
                return s;
            }
            return unsupported("a word boundary '\\b'");
        default:
            if (std::isdigit(uint8_t(c))) return unsupported("a backreference");
            if (std::isalpha(uint8_t(c))) return unsupported(std::string("the escape '\\") + c + "'");
            --m_i;
            s.add(decodeUtf8(m_p, m_i));
            return s;
        }
    }

    Result<GrammarSymbol> charClass()
    {
        ++m_i;  // [
        bool negated = false;
        if (!atEnd() && peek() == '^') {
            negated = true;
            ++m_i;
        }
        CharRanges set;
        bool first = true;
        while (!atEnd() && (peek() != ']' || first)) {
            first = false;
            std::optional<uint32_t> lo;
            if (peek() == '\\') {
                auto escaped = escape(true);
                if (!escaped) return escaped.failure();
                if (escaped->ranges().size() == 1 && escaped->ranges()[0].first == escaped->ranges()[0].second)
                    lo = escaped->ranges()[0].first;
                else {
                    set.addAll(*escaped);
                    continue;
                }
            } else if (peek() == '[' && m_i + 1 < m_p.size() && m_p[m_i + 1] == ':') {
                return unsupported("a POSIX class '[:'");
            } else {
                lo = decodeUtf8(m_p, m_i);
            }
            if (m_i + 1 < m_p.size() && peek() == '-' && m_p[m_i + 1] != ']') {
                ++m_i;
                uint32_t hi = 0;
                if (peek() == '\\') {
                    auto escaped = escape(true);
                    if (!escaped) return escaped.failure();
                    if (escaped->ranges().size() != 1 || escaped->ranges()[0].first != escaped->ranges()[0].second)
                        return fail("a range ending in a class escape");
                    hi = escaped->ranges()[0].first;
                } else {
                    hi = decodeUtf8(m_p, m_i);
                }
                if (hi < *lo) return fail("a range out of order");
                set.add(*lo, hi);
            } else {
                set.add(*lo);
            }
        }
        if (atEnd()) return fail("a missing ']'");
        ++m_i;  // ]
        return symbolFor(negated ? set.complement() : set);
    }

    GrammarBuilder& m_b;
    CharRuleCache& m_chars;
    std::string_view m_p;
    RegexTarget m_target;
    std::string m_field;
    size_t m_i = 0;
};

}  // namespace

GrammarSymbol charSymbol(GrammarBuilder& builder, CharRuleCache& chars, const CharRanges& set, RegexTarget target)
{
    if (target == RegexTarget::Raw) return chars.symbol(set);
    // JSON string: '"' and '\' and the control characters cannot appear raw.
    CharRanges forbidden;
    forbidden.add(0, 0x1F);
    forbidden.add('"');
    forbidden.add('\\');
    const CharRanges plain = set.minus(forbidden);
    std::vector<GrammarSequence> alternatives;
    const std::pair<uint32_t, char> escapes[] = {{'"', '"'}, {'\\', '\\'}, {'\n', 'n'}, {'\t', 't'}, {'\r', 'r'}};
    for (const auto& [c, letter] : escapes)
        if (set.contains(c)) alternatives.push_back({builder.byte('\\'), builder.byte(uint8_t(letter))});
    if (alternatives.empty() && !plain.empty()) return chars.symbol(plain);
    if (!plain.empty()) alternatives.push_back({chars.symbol(plain)});
    return GrammarBuilder::ref(builder.choice(std::move(alternatives), "json-char"));
}

Result<int32_t> compileRegex(GrammarBuilder& builder, CharRuleCache& chars, std::string_view pattern,
                             RegexTarget target, const std::string& field)
{
    return RegexParser(builder, chars, pattern, target, field).run();
}

}  // namespace brook::structured
