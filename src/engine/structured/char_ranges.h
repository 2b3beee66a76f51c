// CharRanges: a set of Unicode code points as sorted, disjoint inclusive ranges, and its
// translation into grammar rules over UTF-8 bytes (the split RE2 uses: every range becomes a few
// sequences of byte ranges). Shared by the regex and EBNF compilers.
#pragma once

#include "engine/structured/grammar.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace brook::structured {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

class CharRanges {
public:
    void add(uint32_t lo, uint32_t hi);
    void add(uint32_t c) { add(c, c); }
    void addAll(const CharRanges& other);
    // Every scalar value (surrogates excluded) not in this set.
    CharRanges complement() const;
    // Drops the code points in `other`.
    CharRanges minus(const CharRanges& other) const;
    bool empty() const { return m_ranges.empty(); }
    bool contains(uint32_t c) const;
    const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const { return m_ranges; }
    bool operator<(const CharRanges& o) const { return m_ranges < o.m_ranges; }

private:
    void normalize();
    std::vector<std::pair<uint32_t, uint32_t>> m_ranges;
};

// Appends one UTF-8 encoded code point.
void appendUtf8(std::string& out, uint32_t c);
// Decodes the code point at `i` of `text` (advancing i); invalid bytes decode as themselves.
uint32_t decodeUtf8(std::string_view text, size_t& i);

// Rules for "one character of the set", cached per set so a repeated class costs one rule.
class CharRuleCache {
public:
    explicit CharRuleCache(GrammarBuilder& builder) : m_builder(builder) {}
    // A symbol deriving the UTF-8 encoding of any one code point of `set` (a plain byte set when
    // the set is ASCII only). Empty sets derive nothing: callers reject them first.
    GrammarSymbol symbol(const CharRanges& set);

private:
    GrammarBuilder& m_builder;
    std::map<CharRanges, GrammarSymbol> m_cache;
};

}  // namespace brook::structured
