// Strict parsers for the two response headers a download trusts with byte counts:
// Content-Length and Content-Range (RFC 9110 sections 8.6 and 14.4). They take the header's
// text as a hostile server sent it and never throw: anything that is not exactly the grammar, or
// does not fit in an int64_t, is nullopt, and the caller fails that attempt with a message.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace brook {

// "1234" (digits only, surrounding blanks allowed) -> 1234.
std::optional<int64_t> parseContentLength(std::string_view text);

struct ContentRange {
    int64_t first = 0;   // first byte position of the body, inclusive
    int64_t last = 0;    // last byte position, inclusive (>= first)
    int64_t total = -1;  // the whole file's size; -1 when the server sent '*'
};
// "bytes 100-199/1000" or "bytes 100-199/*". Unsatisfied ranges ("bytes */1000") are nullopt.
std::optional<ContentRange> parseContentRange(std::string_view text);

}  // namespace brook
