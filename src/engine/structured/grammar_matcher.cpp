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
    // The caches are reset between steps (StructuredDecoding::beginStep), never under a call.
    if (m_automaton->generation() != m_generation) {
        m_generation = m_automaton->generation();
        m_state = m_automaton->internNodes(m_nodes, m_accept);
    }
    return m_state;
}

std::span<const uint32_t> GrammarMatcher::mask(std::span<uint32_t> scratch)
{
    if (m_stopped || m_overLimits) return {};
    std::span<const uint32_t> words = m_automaton->mask(current(), scratch);
    if (words.empty()) return {};
    const bool first = m_numAccepted == 0 && !m_automaton->vocabulary().firstTokenUnsafe().empty();
    if (first || m_accept) {
        // Edits for this request alone: on a copy, never on the shared cached words.
        if (words.data() != scratch.data()) std::copy(words.begin(), words.end(), scratch.begin());
        if (first)
            for (int32_t id : m_automaton->vocabulary().firstTokenUnsafe())
                scratch[size_t(id) >> 5] &= ~(1u << (id & 31));
        if (m_accept)
            for (int32_t id : m_stopTokenIds)
                if (id >= 0 && size_t(id >> 5) < scratch.size()) scratch[size_t(id) >> 5] |= 1u << (id & 31);
        words = scratch;
    }
    if (std::none_of(words.begin(), words.end(), [](uint32_t w) { return w != 0; })) return {};
    return words;
}

std::span<const uint32_t> GrammarMatcher::cachedMask()
{
    if (m_stopped || m_overLimits || m_accept || m_automaton->generation() != m_generation) return {};
    if (m_numAccepted == 0 && !m_automaton->vocabulary().firstTokenUnsafe().empty()) return {};
    return m_automaton->cachedMask(m_state);
}

bool GrammarMatcher::tryAcceptCached(int32_t token)
{
    if (m_stopped || m_overLimits || m_automaton->generation() != m_generation) return false;
    if (std::find(m_stopTokenIds.begin(), m_stopTokenIds.end(), token) != m_stopTokenIds.end()) return false;
    const std::string_view bytes = m_automaton->vocabulary().tokenBytes(token);
    if (bytes.empty()) return false;
    const int32_t next = m_automaton->advanceCached(m_state, bytes);
    if (next < 0) return false;  // not taken yet, or refused: accept() does it and says so
    m_state = next;
    m_nodes = m_automaton->stateNodes(next);
    m_accept = m_automaton->stateAccepts(next);
    ++m_numAccepted;
    return true;
}

bool GrammarMatcher::fillMask(std::span<uint32_t> mask)
{
    const std::span<const uint32_t> words = this->mask(mask);
    if (words.empty()) {
        std::fill(mask.begin(), mask.end(), 0u);
        return false;
    }
    if (words.data() != mask.data()) std::copy(words.begin(), words.end(), mask.begin());
    return true;
}

bool GrammarMatcher::accept(int32_t token)
{
    if (m_stopped || m_overLimits) return false;
    if (std::find(m_stopTokenIds.begin(), m_stopTokenIds.end(), token) != m_stopTokenIds.end()) {
        if (!m_accept) return false;
        m_stopped = true;
        ++m_numAccepted;
        return true;
    }
    const std::string_view bytes = m_automaton->vocabulary().tokenBytes(token);
    if (bytes.empty()) return false;
    const int32_t from = current();
    const int32_t next = m_automaton->advance(from, bytes);
    if (next < 0) {
        // Past the work limits, advance() cannot tell a refusal from a state it had no room to
        // build: the mask says which. An allowed token is taken, and the request ends at the next
        // mask (empty), as it would have had the mask met the limits itself.
        if (!m_automaton->overLimits() || !m_automaton->maskAllows(from, token)) return false;
        m_overLimits = true;
        m_accept = false;
        ++m_numAccepted;
        return true;
    }
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
