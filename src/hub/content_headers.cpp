#include "hub/content_headers.h"

#include <limits>

namespace brook {

namespace {

std::string_view trimBlanks(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// A run of decimal digits that fits in int64_t; nullopt otherwise (no sign, no blanks).
std::optional<int64_t> parseDigits(std::string_view s)
{
    if (s.empty()) return std::nullopt;
    int64_t value = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        const int digit = c - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) return std::nullopt;
        value = value * 10 + digit;
    }
    return value;
}

}  // namespace

std::optional<int64_t> parseContentLength(std::string_view text) { return parseDigits(trimBlanks(text)); }

std::optional<ContentRange> parseContentRange(std::string_view text)
{
    text = trimBlanks(text);
    constexpr std::string_view kUnit = "bytes ";
    if (text.substr(0, kUnit.size()) != kUnit) return std::nullopt;
    text.remove_prefix(kUnit.size());
    const size_t dash = text.find('-');
    const size_t slash = text.find('/');
    if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
    const auto first = parseDigits(text.substr(0, dash));
    const auto last = parseDigits(text.substr(dash + 1, slash - dash - 1));
    if (!first || !last || *last < *first) return std::nullopt;
    ContentRange range{*first, *last, -1};
    const std::string_view total = text.substr(slash + 1);
    if (total != "*") {
        const auto t = parseDigits(total);
        if (!t || *t <= *last) return std::nullopt;
        range.total = *t;
    }
    return range;
}

}  // namespace brook
