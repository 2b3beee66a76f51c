#include "engine/structured/char_ranges.h"

#include <algorithm>

namespace brook::structured {

void CharRanges::add(uint32_t lo, uint32_t hi)
{
    if (lo > hi) std::swap(lo, hi);
    m_ranges.emplace_back(lo, std::min(hi, kMaxCodePoint));
    normalize();
}

void CharRanges::addAll(const CharRanges& other)
{
    m_ranges.insert(m_ranges.end(), other.m_ranges.begin(), other.m_ranges.end());
    normalize();
}

void CharRanges::normalize()
{
    std::sort(m_ranges.begin(), m_ranges.end());
    std::vector<std::pair<uint32_t, uint32_t>> merged;
    for (const auto& r : m_ranges) {
        if (!merged.empty() && r.first <= merged.back().second + 1)
            merged.back().second = std::max(merged.back().second, r.second);
        else merged.push_back(r);
    }
    m_ranges.swap(merged);
}

CharRanges CharRanges::complement() const
{
    CharRanges out;
    uint32_t next = 0;
    for (const auto& [lo, hi] : m_ranges) {
        if (lo > next) out.m_ranges.emplace_back(next, lo - 1);
        next = hi + 1;
    }
    if (next <= kMaxCodePoint) out.m_ranges.emplace_back(next, kMaxCodePoint);
    CharRanges surrogates;
    surrogates.add(0xD800, 0xDFFF);
    return out.minus(surrogates);
}

CharRanges CharRanges::minus(const CharRanges& other) const
{
    CharRanges out;
    for (auto [lo, hi] : m_ranges) {
        for (const auto& [olo, ohi] : other.m_ranges) {
            if (ohi < lo || olo > hi) continue;
            if (olo > lo) out.m_ranges.emplace_back(lo, olo - 1);
            if (ohi >= hi) {
                lo = 1;
                hi = 0;  // consumed
                break;
            }
            lo = ohi + 1;
        }
        if (lo <= hi) out.m_ranges.emplace_back(lo, hi);
    }
    out.normalize();
    return out;
}

bool CharRanges::contains(uint32_t c) const
{
    return std::any_of(m_ranges.begin(), m_ranges.end(), [&](const auto& r) { return c >= r.first && c <= r.second; });
}

void appendUtf8(std::string& out, uint32_t c)
{
    if (c < 0x80) {
        out += char(c);
    } else if (c < 0x800) {
        out += char(0xC0 | (c >> 6));
        out += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += char(0xE0 | (c >> 12));
        out += char(0x80 | ((c >> 6) & 0x3F));
        out += char(0x80 | (c & 0x3F));
    } else {
        out += char(0xF0 | (c >> 18));
        out += char(0x80 | ((c >> 12) & 0x3F));
        out += char(0x80 | ((c >> 6) & 0x3F));
        out += char(0x80 | (c & 0x3F));
    }
}

uint32_t decodeUtf8(std::string_view text, size_t& i)
{
    const auto b0 = uint8_t(text[i]);
    int length = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 1;
    if (i + size_t(length) > text.size()) length = 1;
    uint32_t c = length == 1 ? b0 : length == 2 ? (b0 & 0x1F) : length == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (int k = 1; k < length; ++k) {
        const auto b = uint8_t(text[i + size_t(k)]);
        if ((b & 0xC0) != 0x80) {
            length = 1;
            c = b0;
            break;
        }
        c = (c << 6) | (b & 0x3F);
    }
    i += size_t(length);
    return c;
}

namespace {

using ByteRangeSequence = std::vector<std::pair<uint8_t, uint8_t>>;

// RE2's split: [lo, hi] of one encoded length becomes sequences of byte ranges, each covering
// exactly a rectangle of encodings.
void utf8Sequences(uint32_t lo, uint32_t hi, std::vector<ByteRangeSequence>& out)
{
    if (lo > hi) return;
    for (uint32_t max : {0x7Fu, 0x7FFu, 0xFFFFu}) {
        if (lo <= max && hi > max) {
            utf8Sequences(lo, max, out);
            utf8Sequences(max + 1, hi, out);
            return;
        }
    }
    if (hi < 0x80) {
        out.push_back({{uint8_t(lo), uint8_t(hi)}});
        return;
    }
    const int length = hi < 0x800 ? 2 : hi < 0x10000 ? 3 : 4;
    for (int i = 1; i < length; ++i) {
        const uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                utf8Sequences(lo, lo | m, out);
                utf8Sequences((lo | m) + 1, hi, out);
                return;
            }
            if ((hi & m) != m) {
                utf8Sequences(lo, (hi & ~m) - 1, out);
                utf8Sequences(hi & ~m, hi, out);
                return;
            }
        }
    }
    std::string a, b;
    appendUtf8(a, lo);
    appendUtf8(b, hi);
    ByteRangeSequence sequence;
    for (size_t k = 0; k < a.size(); ++k) sequence.emplace_back(uint8_t(a[k]), uint8_t(b[k]));
    out.push_back(std::move(sequence));
}

}  // namespace

GrammarSymbol CharRuleCache::symbol(const CharRanges& set)
{
    if (auto it = m_cache.find(set); it != m_cache.end()) return it->second;
    GrammarSymbol result;
    if (!set.empty() && set.ranges().back().second < 0x80) {
        ByteSet bytes;
        for (const auto& [lo, hi] : set.ranges()) bytes.addRange(uint8_t(lo), uint8_t(hi));
        result = m_builder.bytes(bytes);
    } else {
        std::vector<ByteRangeSequence> sequences;
        for (const auto& [lo, hi] : set.ranges()) utf8Sequences(lo, hi, sequences);
        const int32_t rule = m_builder.newRule("char");
        for (const ByteRangeSequence& sequence : sequences) {
            GrammarSequence symbols;
            for (const auto& [lo, hi] : sequence) {
                ByteSet bytes;
                bytes.addRange(lo, hi);
                symbols.push_back(m_builder.bytes(bytes));
            }
            m_builder.addAlternative(rule, std::move(symbols));
        }
        result = GrammarBuilder::ref(rule);
    }
    m_cache.emplace(set, result);
    return result;
}

}  // namespace brook::structured
