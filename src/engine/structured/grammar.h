// Grammar: the intermediate form every structured-output request compiles to (JSON schema, regex,
// choice list, EBNF). A context-free grammar over bytes: rules of alternatives, each a sequence of
// symbols that are either a byte set (one byte of the output) or a reference to a rule. Repetition
// and options are desugared by the compilers into helper rules, so the matcher only ever sees
// sequences, choices and references.
//
// Grammars come from hostile input, so GrammarBuilder counts what it builds (GrammarLimits) and
// finish() rejects grammars the matcher could not run: undefined rules, rules that derive nothing,
// and left recursion that grows the parse stack (A ::= A "x"). Tail recursion through nullable
// prefixes (A ::= "x"* A) is fine: the matcher's stack does not grow on a tail call.
#pragma once

#include "engine/result.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace brook::structured {

// A set of byte values, one bit each.
struct ByteSet {
    std::array<uint64_t, 4> bits{};
    void add(uint8_t b) { bits[b >> 6] |= uint64_t{1} << (b & 63); }
    void addRange(uint8_t lo, uint8_t hi)
    {
        for (int b = lo; b <= hi; ++b) add(uint8_t(b));
    }
    bool has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1; }
    bool empty() const { return (bits[0] | bits[1] | bits[2] | bits[3]) == 0; }
    bool operator==(const ByteSet&) const = default;
};

// A symbol: rule >= 0 references a rule; otherwise `bytes` is the set of one output byte.
struct GrammarSymbol {
    int32_t rule = -1;
    int32_t byteSet = -1;  // index into Grammar::byteSets when rule < 0
};

using GrammarSequence = std::vector<GrammarSymbol>;

struct GrammarRule {
    std::string name;
    std::vector<GrammarSequence> alternatives;  // an empty sequence derives the empty string
};

// What one compilation may build. A request exceeding them gets a 400 naming the limit.
struct GrammarLimits {
    size_t maxRules = 200000;
    size_t maxSymbols = 2000000;
    int maxNesting = 64;             // schema / regex / EBNF group nesting
    int maxRepetition = 10000;       // the largest {m,n} bound, maxLength, maxItems
    size_t maxInputBytes = 1 << 20;  // schema / regex / grammar text
};

// The compiled, immutable grammar, flattened for the matcher: every alternative is a run of
// elements in `elements` ended by an End element, so a parse position is one index.
class Grammar {
public:
    enum class ElementKind : uint8_t { Bytes, Rule, End };
    struct Element {
        ElementKind kind = ElementKind::End;
        int32_t value = 0;  // byte-set index (Bytes) or rule id (Rule)
    };

    const std::vector<Element>& elements() const { return m_elements; }
    const std::vector<ByteSet>& byteSets() const { return m_byteSets; }
    // The first element of each alternative of `rule`.
    const std::vector<int32_t>& alternativeStarts(int32_t rule) const { return m_ruleStarts[size_t(rule)]; }
    int32_t rootRule() const { return m_root; }
    size_t numRules() const { return m_ruleStarts.size(); }
    const std::string& ruleName(int32_t rule) const { return m_ruleNames[size_t(rule)]; }

private:
    friend class GrammarBuilder;
    std::vector<Element> m_elements;
    std::vector<ByteSet> m_byteSets;
    std::vector<std::vector<int32_t>> m_ruleStarts;
    std::vector<std::string> m_ruleNames;
    int32_t m_root = 0;
};

class GrammarBuilder {
public:
    explicit GrammarBuilder(GrammarLimits limits = {}) : m_limits(limits) {}

    const GrammarLimits& limits() const { return m_limits; }

    // A new rule with no alternatives yet (so it can be referenced before it is defined).
    int32_t newRule(std::string name);
    // The rule called `name`, creating it empty when absent.
    int32_t ruleNamed(const std::string& name);
    bool hasRule(const std::string& name) const;
    void addAlternative(int32_t rule, GrammarSequence sequence);
    size_t numAlternatives(int32_t rule) const { return m_rules[size_t(rule)].alternatives.size(); }

    GrammarSymbol bytes(const ByteSet& set);
    GrammarSymbol byte(uint8_t b);
    static GrammarSymbol ref(int32_t rule) { return {rule, -1}; }
    // The symbols that spell `text` byte by byte.
    void appendLiteral(GrammarSequence& sequence, std::string_view text);
    // A rule deriving exactly `text`.
    int32_t literalRule(std::string_view text);
    // A rule deriving `item` repeated between min and max times (max < 0: unbounded), as
    // right-recursive helper rules (the matcher's stack stays flat).
    Result<int32_t> repeat(GrammarSymbol item, int min, int max, const std::string& field);
    // A rule deriving any one of the alternatives.
    int32_t choice(std::vector<GrammarSequence> alternatives, std::string name);

    // Set when a limit was crossed; finish() reports it.
    bool overLimit() const { return !m_overLimit.empty(); }
    void failLimit(std::string message)
    {
        if (m_overLimit.empty()) m_overLimit = std::move(message);
    }

    // Checks and flattens; `field` names the request field errors are reported against.
    Result<std::shared_ptr<const Grammar>> finish(int32_t root, const std::string& field);

private:
    GrammarLimits m_limits;
    std::vector<GrammarRule> m_rules;
    std::vector<ByteSet> m_byteSets;
    size_t m_numSymbols = 0;
    std::string m_overLimit;
};

}  // namespace brook::structured
