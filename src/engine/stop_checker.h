// StopChecker: finds stop strings in generated text, also when one spans several tokens,
// and holds back the text that could still become a stop string so it is never streamed.
// One per sequence; not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace brook {

class StopChecker {
public:
    StopChecker(std::vector<std::string> stopStrings, bool includeStopStr);

    struct Update {
        std::string text;        // text safe to stream now
        bool stopped = false;    // a stop string matched; generation ends
        std::string matched;     // which one
    };
    // Feeds the next decoded text delta. After a stop, returns stopped = true and emits nothing.
    Update push(const std::string& delta);
    // End of generation for another reason: releases held-back text.
    std::string flush();

private:
    std::vector<std::string> m_stops;
    bool m_includeStopStr;
    size_t m_maxStopLength = 0;
    std::string m_pending;  // text not yet emitted (may be a stop string's prefix)
    bool m_stopped = false; // after a match, further deltas are dropped
};

} // namespace brook
