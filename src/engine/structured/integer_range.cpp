#include "engine/structured/integer_range.h"

#include <algorithm>
#include <string>

namespace brook::structured {

namespace {

GrammarSymbol digitRange(GrammarBuilder& b, char lo, char hi)
{
    ByteSet set;
    set.addRange(uint8_t(lo), uint8_t(hi));
    return b.bytes(set);
}

// Same-length digit strings lo <= hi: every string of that length between them.
void sameLength(GrammarBuilder& b, const std::string& lo, const std::string& hi, GrammarSequence prefix,
                std::vector<GrammarSequence>& out)
{
    if (lo.empty()) {
        out.push_back(std::move(prefix));
        return;
    }
    const std::string loTail = lo.substr(1), hiTail = hi.substr(1);
    if (lo[0] == hi[0]) {
        prefix.push_back(b.byte(uint8_t(lo[0])));
        sameLength(b, loTail, hiTail, std::move(prefix), out);
        return;
    }
    const bool loTailMin = std::all_of(loTail.begin(), loTail.end(), [](char c) { return c == '0'; });
    const bool hiTailMax = std::all_of(hiTail.begin(), hiTail.end(), [](char c) { return c == '9'; });
    const char firstFull = loTailMin ? lo[0] : char(lo[0] + 1);
    const char lastFull = hiTailMax ? hi[0] : char(hi[0] - 1);
    if (!loTailMin) {
        GrammarSequence p = prefix;
        p.push_back(b.byte(uint8_t(lo[0])));
        sameLength(b, loTail, std::string(loTail.size(), '9'), std::move(p), out);
    }
    if (firstFull <= lastFull) {
        GrammarSequence p = prefix;
        p.push_back(digitRange(b, firstFull, lastFull));
        for (size_t k = 0; k < loTail.size(); ++k) p.push_back(digitRange(b, '0', '9'));
        out.push_back(std::move(p));
    }
    if (!hiTailMax) {
        GrammarSequence p = prefix;
        p.push_back(b.byte(uint8_t(hi[0])));
        sameLength(b, std::string(hiTail.size(), '0'), hiTail, std::move(p), out);
    }
}

// 0 <= lo <= hi.
void nonNegative(GrammarBuilder& b, uint64_t lo, uint64_t hi, GrammarSequence prefix, std::vector<GrammarSequence>& out)
{
    const std::string loText = std::to_string(lo), hiText = std::to_string(hi);
    for (size_t length = loText.size(); length <= hiText.size(); ++length) {
        const std::string first = length == loText.size() ? loText : "1" + std::string(length - 1, '0');
        const std::string last = length == hiText.size() ? hiText : std::string(length, '9');
        sameLength(b, first, last, prefix, out);
    }
}

}  // namespace

std::vector<GrammarSequence> integerRange(GrammarBuilder& builder, int64_t lo, int64_t hi)
{
    std::vector<GrammarSequence> out;
    if (lo > hi) return out;
    if (lo < 0) {
        const int64_t negHi = std::min<int64_t>(hi, -1);
        nonNegative(builder, uint64_t(-negHi), uint64_t(-lo), {builder.byte('-')}, out);
    }
    if (hi >= 0) nonNegative(builder, uint64_t(std::max<int64_t>(lo, 0)), uint64_t(hi), {}, out);
    return out;
}

}  // namespace brook::structured
