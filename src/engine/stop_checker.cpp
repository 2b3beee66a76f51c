// StopChecker: stop strings over streamed text. The pending buffer holds only text that could
// still be the start of a stop string, so it stays shorter than the longest stop string plus
// one delta and every search is over a few bytes.
// Convention: when several stop strings occur, the one that ENDS first wins (ties: the one that
// starts first). That is what a character-by-character stream would see, so the result does not
// depend on how the text was cut into deltas.
#include "engine/stop_checker.h"

#include <algorithm>
#include <string_view>

namespace brook {

StopChecker::StopChecker(std::vector<std::string> stopStrings, bool includeStopStr)
    : m_includeStopStr(includeStopStr)
{
    for (auto& stop : stopStrings) {
        if (stop.empty()) continue;  // an empty stop string would match everywhere; vLLM ignores it too
        if (std::find(m_stops.begin(), m_stops.end(), stop) != m_stops.end()) continue;
        m_maxStopLength = std::max(m_maxStopLength, stop.size());
        m_stops.push_back(std::move(stop));
    }
}

StopChecker::Update StopChecker::push(const std::string& delta)
{
    Update update;
    if (m_stopped) {
        update.stopped = true;
        return update;
    }
    if (m_stops.empty()) {
        update.text = delta;
        return update;
    }
    m_pending += delta;

    // Earliest-ending occurrence of any stop string.
    size_t bestStart = std::string::npos;
    size_t bestEnd = std::string::npos;
    const std::string* best = nullptr;
    for (const auto& stop : m_stops) {
        const size_t start = m_pending.find(stop);
        if (start == std::string::npos) continue;
        const size_t end = start + stop.size();
        if (!best || end < bestEnd || (end == bestEnd && start < bestStart)) {
            best = &stop;
            bestStart = start;
            bestEnd = end;
        }
    }
    if (best) {
        update.text = m_pending.substr(0, m_includeStopStr ? bestEnd : bestStart);
        update.stopped = true;
        update.matched = *best;
        m_pending.clear();
        m_stopped = true;
        return update;
    }

    // Hold back the longest suffix that is a proper prefix of some stop string. Stop strings are
    // valid UTF-8, so such a suffix never starts inside a multi-byte character.
    size_t hold = 0;
    for (size_t length = std::min(m_pending.size(), m_maxStopLength - 1); length > 0; --length) {
        const std::string_view suffix(m_pending.data() + m_pending.size() - length, length);
        const bool isPrefix = std::any_of(m_stops.begin(), m_stops.end(), [&](const std::string& stop) {
            return stop.size() > length && std::string_view(stop).substr(0, length) == suffix;
        });
        if (isPrefix) {
            hold = length;
            break;
        }
    }
    update.text = m_pending.substr(0, m_pending.size() - hold);
    m_pending.erase(0, m_pending.size() - hold);
    return update;
}

std::string StopChecker::flush()
{
    std::string released;
    released.swap(m_pending);
    return released;
}

} // namespace brook
