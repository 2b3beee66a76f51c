#include "engine/structured/grammar_matcher.h"

#include <algorithm>

namespace brook::structured {

GrammarMatcher::GrammarMatcher(std::shared_ptr<GrammarAutomaton> automaton, std::vector<int32_t> stopTokenIds)
    : m_automaton(std::move(automaton)), m_stopTokenIds(std::move(stopTokenIds))
{
    m_automaton->maybeReset();
    m_generation = m_automaton->generation();
    m_state = m_automaton->startState();
    m_nodes = m_automaton->stateNodes(m_state);
    m_accept = m_automaton->stateAccepts(m_state);
}

int32_t GrammarMatcher::current()
{
    m_automaton->maybeReset();
    if (m_automaton->generation() != m_generation) {
        m_generation = m_automaton->generation();
        m_state = m_automaton->internNodes(m_nodes, m_accept);
    }
    return m_state;
}

bool GrammarMatcher::fillMask(std::span<uint32_t> mask)
{
    if (m_stopped) {
        std::fill(mask.begin(), mask.end(), 0u);
        return false;
    }
    if (!m_automaton->fillMask(current(), mask)) return false;
    if (m_numAccepted == 0)
        for (int32_t id : m_automaton->vocabulary().firstTokenUnsafe()) mask[size_t(id) >> 5] &= ~(1u << (id & 31));
    if (m_accept)
        for (int32_t id : m_stopTokenIds)
            if (id >= 0 && size_t(id >> 5) < mask.size()) mask[size_t(id) >> 5] |= 1u << (id & 31);
    return std::any_of(mask.begin(), mask.end(), [](uint32_t w) { return w != 0; });
}

bool GrammarMatcher::accept(int32_t token)
{
    if (m_stopped) return false;
    if (std::find(m_stopTokenIds.begin(), m_stopTokenIds.end(), token) != m_stopTokenIds.end()) {
        if (!m_accept) return false;
        m_stopped = true;
        ++m_numAccepted;
        return true;
    }
    const std::string_view bytes = m_automaton->vocabulary().tokenBytes(token);
    if (bytes.empty()) return false;
    const int32_t next = m_automaton->advance(current(), bytes);
    if (next < 0) return false;
    m_state = next;
    m_nodes = m_automaton->stateNodes(next);
    m_accept = m_automaton->stateAccepts(next);
    ++m_numAccepted;
    return true;
}

bool GrammarMatcher::syncTo(std::span<const int32_t> outputTokens)
{
    while (size_t(m_numAccepted) < outputTokens.size())
        if (!accept(outputTokens[size_t(m_numAccepted)])) return false;
    return true;
}

bool GrammarMatcher::terminated() { return m_stopped || (m_accept && m_nodes.empty()); }

bool GrammarMatcher::accepting() { return m_accept; }

}  // namespace brook::structured
