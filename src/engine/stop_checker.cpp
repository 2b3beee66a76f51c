// StopChecker: stop strings over streamed text. Each stop string keeps a Knuth-Morris-Pratt
// state across deltas, so checking costs one step per output byte and stop string, however long
// the strings are; the pending buffer holds only text that could still start a stop string.
// Convention: when several stop strings occur, the one that ENDS first wins (ties: the one that
// starts first). That is what a character-by-character stream would see, so the result does not
// depend on how the text was cut into deltas.
#include "engine/stop_checker.h"

#include <algorithm>
#include <unordered_set>

namespace brook {

StopChecker::StopChecker(std::vector<std::string> stopStrings, bool includeStopStr) : m_includeStopStr(includeStopStr)
{
    std::unordered_set<std::string> seen;  // linear duplicate removal, whatever the list's length
    for (auto& stop : stopStrings) {
        if (stop.empty()) continue;  // an empty stop string would match everywhere; vLLM ignores it too
        if (!seen.insert(stop).second) continue;
        Pattern p;
        p.text = std::move(stop);
        p.fallback.assign(p.text.size(), 0);
        for (size_t i = 1, k = 0; i < p.text.size(); ++i) {
            while (k > 0 && p.text[i] != p.text[k]) k = p.fallback[k - 1];
            if (p.text[i] == p.text[k]) ++k;
            p.fallback[i] = uint32_t(k);
        }
        m_stops.push_back(std::move(p));
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
    const size_t base = m_pending.size();  // where `delta` starts inside m_pending
    m_pending += delta;

    // Advance every stop string over the delta; the earliest-ending match wins, and of two that
    // end together the longer one (it starts first).
    size_t bestEnd = std::string::npos;
    const Pattern* best = nullptr;
    for (Pattern& p : m_stops) {
        uint32_t q = p.matched;
        for (size_t i = 0; i < delta.size(); ++i) {
            const char c = delta[i];
            while (q > 0 && p.text[q] != c) q = p.fallback[q - 1];
            if (p.text[q] == c) ++q;
            if (q == p.text.size()) {
                const size_t end = base + i + 1;
                if (!best || end < bestEnd || (end == bestEnd && p.text.size() > best->text.size())) {
                    best = &p;
                    bestEnd = end;
                }
                q = p.fallback[q - 1];
                break;
            }
        }
        p.matched = q;
    }
    if (best) {
        update.text = m_pending.substr(0, m_includeStopStr ? bestEnd : bestEnd - best->text.size());
        update.stopped = true;
        update.matched = best->text;
        m_pending.clear();
        m_stopped = true;
        return update;
    }

    // Hold back the longest suffix that is a proper prefix of some stop string: exactly the
    // largest `matched`. Stop strings are valid UTF-8, so it never starts inside a character.
    size_t hold = 0;
    for (const Pattern& p : m_stops) hold = std::max<size_t>(hold, p.matched);
    hold = std::min(hold, m_pending.size());
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

}  // namespace brook
