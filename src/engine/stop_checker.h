// StopChecker: finds stop strings in generated text, also when one spans several tokens,
// and holds back the text that could still become a stop string so it is never streamed.
// One per sequence; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace brook {

class StopChecker {
public:
    StopChecker(std::vector<std::string> stopStrings, bool includeStopStr);

    struct Update {
        std::string text;      // text safe to stream now
        bool stopped = false;  // a stop string matched; generation ends
        std::string matched;   // which one
    };
    // Feeds the next decoded text delta. After a stop, returns stopped = true and emits nothing.
    Update push(const std::string& delta);
    // End of generation for another reason: releases held-back text.
    std::string flush();

private:
    // One stop string with its Knuth-Morris-Pratt table; `matched` is how much of it the text
    // seen so far ends with, so each byte of output is looked at once per stop string.
    struct Pattern {
        std::string text;
        std::vector<uint32_t> fallback;  // [i]: longest proper border of text[0..i]
        uint32_t matched = 0;
    };

    std::vector<Pattern> m_stops;
    bool m_includeStopStr;
    std::string m_pending;   // text not yet emitted (may be a stop string's prefix)
    bool m_stopped = false;  // after a match, further deltas are dropped
};

}  // namespace brook
