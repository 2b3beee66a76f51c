#include "engine/structured/grammar_automaton.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace brook::structured {

namespace {

constexpr int32_t kUnknown = -2;
// Soft limits: past them the caches start over (states, transitions, masks) or the request stops
// (stack nodes, the stacks of one state).
constexpr size_t kMaxStates = 16384;
constexpr size_t kMaxMasks = 512;
constexpr size_t kMaxNodes = size_t(4) << 20;
constexpr size_t kMaxStacksPerState = 20000;
// Stack nodes expanded by one call (a mask, an advance): bounds the time a hostile grammar can
// take in one step (about a second at worst) before the request is stopped.
constexpr size_t kMaxExpansionsPerCall = 10'000'000;

}  // namespace

size_t GrammarAutomaton::VectorHash::operator()(const std::vector<int32_t>& v) const
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
    for (int32_t x : v) h = (h ^ uint32_t(x)) * 0x100000001B3ull + (h >> 29);
    return size_t(h);
}

GrammarAutomaton::GrammarAutomaton(std::shared_ptr<const Grammar> grammar,
                                   std::shared_ptr<const TokenVocabulary> vocabulary)
    : m_grammar(std::move(grammar)), m_vocabulary(std::move(vocabulary))
{}

int32_t GrammarAutomaton::node(int32_t position, int32_t parent)
{
    const uint64_t key = (uint64_t(uint32_t(position)) << 32) | uint32_t(parent);
    auto [it, inserted] = m_nodeIds.try_emplace(key, int32_t(m_nodes.size()));
    if (inserted) {
        m_nodes.emplace_back(position, parent);
        if (m_nodes.size() > kMaxNodes) m_overflow = true;
    }
    return it->second;
}

void GrammarAutomaton::close(int32_t seed, bool& accept)
{
    const auto& elements = m_grammar->elements();
    m_stack.assign(1, seed);
    while (!m_stack.empty()) {
        const int32_t x = m_stack.back();
        m_stack.pop_back();
        if (x < 0) {  // the bottom: the whole input can end here
            accept = true;
            continue;
        }
        if (m_visited.size() < m_nodes.size()) m_visited.resize(m_nodes.size() * 2, 0);
        if (m_visited[size_t(x)] == m_visitMark) continue;
        m_visited[size_t(x)] = m_visitMark;
        if (++m_expansions > kMaxExpansionsPerCall) {
            m_overflow = true;
            return;
        }
        const auto [position, parent] = m_nodes[size_t(x)];
        const Grammar::Element& e = elements[size_t(position)];
        if (e.kind == Grammar::ElementKind::Bytes) {
            m_work.push_back(x);
            if (m_work.size() > kMaxStacksPerState) {
                m_overflow = true;
                return;
            }
        } else if (e.kind == Grammar::ElementKind::End) {
            m_stack.push_back(parent);
        } else {
            // A tail call returns straight to the parent: the stack does not grow.
            const bool tail = elements[size_t(position) + 1].kind == Grammar::ElementKind::End;
            const int32_t continuation = tail ? parent : node(position + 1, parent);
            for (int32_t start : m_grammar->alternativeStarts(e.value)) m_stack.push_back(node(start, continuation));
        }
        if (m_overflow) return;
    }
}

int32_t GrammarAutomaton::intern(std::vector<int32_t>&& nodes, bool accept)
{
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    nodes.push_back(accept ? 1 : 0);
    auto it = m_stateIds.find(nodes);
    if (it != m_stateIds.end()) return it->second;
    // One call may create states past kMaxStates (they are dropped between steps); a call that
    // creates this many is a grammar exploding: stop it (each state holds 1 KiB of transitions).
    if (m_states.size() >= 4 * kMaxStates) m_overflow = true;
    const auto id = int32_t(m_states.size());
    m_stateIds.emplace(nodes, id);
    nodes.pop_back();
    m_states.push_back({std::move(nodes), accept, -1});
    m_transitions.resize(m_transitions.size() + 256, kUnknown);
    return id;
}

int32_t GrammarAutomaton::startState()
{
    std::lock_guard lock(m_mutex);
    if (m_start >= 0) return m_start;
    m_expansions = 0;
    m_work.clear();
    ++m_visitMark;
    bool accept = false;
    for (int32_t start : m_grammar->alternativeStarts(m_grammar->rootRule())) close(node(start, -1), accept);
    m_start = intern(std::move(m_work), accept);
    m_work = {};
    return m_start;
}

int32_t GrammarAutomaton::step(int32_t state, uint8_t byte)
{
    int32_t& cached = m_transitions[size_t(state) * 256 + byte];
    if (cached != kUnknown) return cached;
    const auto& elements = m_grammar->elements();
    const auto& sets = m_grammar->byteSets();
    m_work.clear();
    ++m_visitMark;
    bool accept = false;
    bool any = false;
    for (int32_t x : m_states[size_t(state)].nodes) {
        const auto [position, parent] = m_nodes[size_t(x)];
        if (!sets[size_t(elements[size_t(position)].value)].has(byte)) continue;
        any = true;
        close(node(position + 1, parent), accept);
        if (m_overflow) break;
    }
    int32_t next = kDead;
    if (any && !m_overflow && (accept || !m_work.empty())) next = intern(std::move(m_work), accept);
    m_work = {};
    m_transitions[size_t(state) * 256 + byte] = next;  // `cached` may dangle after intern's resize
    return next;
}

int32_t GrammarAutomaton::advance(int32_t state, std::string_view bytes)
{
    std::lock_guard lock(m_mutex);
    m_expansions = 0;
    for (char c : bytes) {
        if (state < 0) return kDead;
        state = step(state, uint8_t(c));
    }
    return state;
}

bool GrammarAutomaton::accepts(int32_t state)
{
    std::lock_guard lock(m_mutex);
    return state >= 0 && m_states[size_t(state)].accept;
}

bool GrammarAutomaton::terminated(int32_t state)
{
    std::lock_guard lock(m_mutex);
    return state >= 0 && m_states[size_t(state)].accept && m_states[size_t(state)].nodes.empty();
}

bool GrammarAutomaton::fillMask(int32_t state, std::span<uint32_t> mask)
{
    std::lock_guard lock(m_mutex);
    m_expansions = 0;
    if (m_overflow || state < 0) {
        std::fill(mask.begin(), mask.end(), 0u);
        return !m_overflow;
    }
    if (const int32_t cached = m_states[size_t(state)].mask; cached >= 0) {
        const std::vector<uint32_t>& bits = m_masks[size_t(cached)];
        std::copy(bits.begin(), bits.end(), mask.begin());
        ++m_stats.maskHits;
        return true;
    }
    std::fill(mask.begin(), mask.end(), 0u);
    // Depth-first over the flat trie: depthState[d] is the state after the current token's first
    // d bytes, valid up to `valid`; a dead prefix skips every following token that shares it.
    const auto& tokens = m_vocabulary->sorted();
    std::vector<int32_t> depthState(1, state);
    size_t valid = 0;
    for (size_t i = 0; i < tokens.size();) {
        const TokenVocabulary::Entry& t = tokens[i];
        const std::string_view bytes = m_vocabulary->bytesOf(t);
        size_t d = std::min<size_t>(t.lcp, valid);
        if (depthState.size() < bytes.size() + 1) depthState.resize(bytes.size() + 1);
        bool alive = true;
        for (; d < bytes.size(); ++d) {
            const int32_t next = step(depthState[d], uint8_t(bytes[d]));
            if (next < 0) {
                alive = false;
                break;
            }
            depthState[d + 1] = next;
        }
        if (m_overflow) break;
        if (alive) {
            mask[size_t(t.id) >> 5] |= 1u << (t.id & 31);
            valid = bytes.size();
            ++i;
            continue;
        }
        valid = d;  // states up to depth d are still those of the following tokens' prefix
        for (++i; i < tokens.size() && tokens[i].lcp > d; ++i) {}
    }
    if (m_overflow) {
        spdlog::warn("structured output: the grammar's parser states outgrew their limits; stopping the request");
        std::fill(mask.begin(), mask.end(), 0u);
        return false;
    }
    ++m_stats.masksComputed;
    if (m_masks.size() < kMaxMasks) {
        m_states[size_t(state)].mask = int32_t(m_masks.size());
        m_masks.emplace_back(mask.begin(), mask.end());
    }
    return true;
}

void GrammarAutomaton::maybeReset()
{
    std::lock_guard lock(m_mutex);
    if (m_states.size() <= kMaxStates && m_masks.size() < kMaxMasks) return;
    // Masks alone full: drop them; states past their limit: drop every cache but the stack nodes.
    if (m_states.size() <= kMaxStates) {
        for (State& s : m_states) s.mask = -1;
        m_masks.clear();
        return;
    }
    m_states.clear();
    m_stateIds.clear();
    m_transitions.clear();
    m_masks.clear();
    m_start = -1;
    ++m_generation;
}

uint64_t GrammarAutomaton::generation()
{
    std::lock_guard lock(m_mutex);
    return m_generation;
}

std::vector<int32_t> GrammarAutomaton::stateNodes(int32_t state)
{
    std::lock_guard lock(m_mutex);
    return state >= 0 ? m_states[size_t(state)].nodes : std::vector<int32_t>{};
}

bool GrammarAutomaton::stateAccepts(int32_t state)
{
    std::lock_guard lock(m_mutex);
    return state >= 0 && m_states[size_t(state)].accept;
}

int32_t GrammarAutomaton::internNodes(const std::vector<int32_t>& nodes, bool accept)
{
    std::lock_guard lock(m_mutex);
    std::vector<int32_t> copy = nodes;
    return intern(std::move(copy), accept);
}

GrammarAutomaton::Stats GrammarAutomaton::stats()
{
    std::lock_guard lock(m_mutex);
    Stats s = m_stats;
    s.states = m_states.size();
    s.nodes = m_nodes.size();
    return s;
}

}  // namespace brook::structured
