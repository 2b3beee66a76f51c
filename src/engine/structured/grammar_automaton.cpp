#include "engine/structured/grammar_automaton.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

namespace brook::structured {

namespace {

constexpr int32_t kUnknown = -2;
// Soft limits: past them the caches start over (states, transitions, masks) or the request stops
// (stack nodes, the stacks of one state).
constexpr size_t kMaxStates = 16384;
constexpr size_t kMaxMasks = 512;
constexpr size_t kMaxSplits = 256;
constexpr size_t kMaxNodes = size_t(4) << 20;
constexpr size_t kMaxStacksPerState = 20000;
// Stack nodes expanded by one call (a mask, an advance): bounds the time a hostile grammar can
// take in one step (about a second at worst) before the request is stopped.
constexpr size_t kMaxExpansionsPerCall = 10'000'000;
// Frames kept when a state is cut for its mask split. Deeper keeps more tokens certain; shallower
// lets more states share one split. A JSON value's rules sit 2-4 frames deep (character, repeat,
// string, object), the containers' positions (which array item) below them: with the people
// schema over 6,000 tokens, 3 frames compute 2,894 splits for 6,000 new states and halve the mean
// mask time; 6 frames share nothing (structured_mask_bench, docs/benchmarks.md).
constexpr int kContextDepth = 3;
// A split whose uncertain tokens are more than this share of the vocabulary costs more to finish
// per state (one walk per token) than walking the full state's trie: then the state is walked.
constexpr size_t kMaxUncertainShare = 8;
// The position of the context sentinel node: no element has it.
constexpr int32_t kContextPosition = -3;

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
{
    m_contextNode = node(kContextPosition, -1);
}

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

void GrammarAutomaton::close(int32_t seed, bool& accept, bool& context)
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
        if (x == m_contextNode) {  // returned below a cut: what follows is not known here
            context = true;
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

int32_t GrammarAutomaton::intern(std::vector<int32_t>&& nodes, bool accept, bool context)
{
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    nodes.push_back((accept ? 1 : 0) | (context ? 2 : 0));
    auto it = m_stateIds.find(nodes);
    if (it != m_stateIds.end()) return it->second;
    // One call may create states past kMaxStates (they are dropped between steps); a call that
    // creates this many is a grammar exploding: stop it (each state holds 1 KiB of transitions).
    if (m_states.size() >= 4 * kMaxStates) m_overflow = true;
    const auto id = int32_t(m_states.size());
    m_stateIds.emplace(nodes, id);
    nodes.pop_back();
    State s;
    s.nodes = std::move(nodes);
    s.accept = accept;
    s.context = context;
    m_states.push_back(std::move(s));
    m_transitions.resize(m_transitions.size() + 256, kUnknown);
    return id;
}

int32_t GrammarAutomaton::startState()
{
    {
        std::shared_lock lock(m_mutex);
        if (m_start >= 0) return m_start;
    }
    std::unique_lock lock(m_mutex);
    if (m_start >= 0) return m_start;
    m_expansions = 0;
    m_work.clear();
    ++m_visitMark;
    bool accept = false, context = false;
    for (int32_t start : m_grammar->alternativeStarts(m_grammar->rootRule())) close(node(start, -1), accept, context);
    m_start = intern(std::move(m_work), accept, false);
    m_work = {};
    return m_start;
}

int32_t GrammarAutomaton::step(int32_t state, uint8_t byte)
{
    if (const int32_t cached = m_transitions[size_t(state) * 256 + byte]; cached != kUnknown) return cached;
    const auto& elements = m_grammar->elements();
    const auto& sets = m_grammar->byteSets();
    m_work.clear();
    ++m_visitMark;
    bool accept = false, context = false;
    bool any = false;
    for (int32_t x : m_states[size_t(state)].nodes) {
        const auto [position, parent] = m_nodes[size_t(x)];
        if (!sets[size_t(elements[size_t(position)].value)].has(byte)) continue;
        any = true;
        close(node(position + 1, parent), accept, context);
        if (m_overflow) break;
    }
    int32_t next = kDead;
    if (any && !m_overflow && (accept || context || !m_work.empty())) next = intern(std::move(m_work), accept, context);
    m_work = {};
    m_transitions[size_t(state) * 256 + byte] = next;  // intern may have moved the table
    return next;
}

int32_t GrammarAutomaton::advance(int32_t state, std::string_view bytes)
{
    {
        // The common case: every transition already taken by some request.
        std::shared_lock lock(m_mutex);
        size_t i = 0;
        for (; i < bytes.size() && state >= 0; ++i) {
            const int32_t next = m_transitions[size_t(state) * 256 + uint8_t(bytes[i])];
            if (next == kUnknown) break;
            state = next;
        }
        if (state < 0) return kDead;
        if (i == bytes.size()) return state;
        bytes = bytes.substr(i);
    }
    std::unique_lock lock(m_mutex);
    m_expansions = 0;
    for (char c : bytes) {
        if (state < 0) return kDead;
        state = step(state, uint8_t(c));
    }
    return state;
}

bool GrammarAutomaton::accepts(int32_t state)
{
    std::shared_lock lock(m_mutex);
    return state >= 0 && m_states[size_t(state)].accept;
}

bool GrammarAutomaton::terminated(int32_t state)
{
    std::shared_lock lock(m_mutex);
    return state >= 0 && m_states[size_t(state)].accept && m_states[size_t(state)].nodes.empty();
}

int32_t GrammarAutomaton::cutNode(int32_t x, bool& cut)
{
    int32_t positions[kContextDepth];
    int32_t y = x;
    for (int k = 0; k < kContextDepth; ++k) {
        if (y < 0) return x;  // shallower than the cut: kept whole
        positions[k] = m_nodes[size_t(y)].first;
        y = m_nodes[size_t(y)].second;
    }
    if (y < 0) return x;
    cut = true;
    int32_t rebuilt = m_contextNode;
    for (int k = kContextDepth - 1; k >= 0; --k) rebuilt = node(positions[k], rebuilt);
    return rebuilt;
}

int32_t GrammarAutomaton::cutState(int32_t state)
{
    if (const int32_t known = m_states[size_t(state)].cut; known >= 0) return known;
    std::vector<int32_t> nodes;
    nodes.reserve(m_states[size_t(state)].nodes.size());
    bool cut = false;
    for (size_t i = 0; i < m_states[size_t(state)].nodes.size(); ++i)
        nodes.push_back(cutNode(m_states[size_t(state)].nodes[i], cut));
    // Equal node lists intern to one id: a shallow state is its own cut.
    const int32_t id = cut ? intern(std::move(nodes), m_states[size_t(state)].accept, false) : state;
    m_states[size_t(state)].cut = id;
    m_states[size_t(id)].cut = id;
    return id;
}

bool GrammarAutomaton::computeSplit(int32_t state, Split& split)
{
    split.accepted.assign(size_t(m_vocabulary->maskWords()), 0u);
    split.uncertain.clear();
    // Depth-first over the flat trie: m_depthState[d] is the state after the current token's first
    // d bytes, valid up to `valid`, and m_depthTouched[d] whether a stack returned below the cut
    // on the way there; a dead prefix skips every following token that shares it.
    const auto& tokens = m_vocabulary->sorted();
    m_depthState.assign(1, state);
    m_depthTouched.assign(1, 0);
    size_t valid = 0;
    for (size_t i = 0; i < tokens.size();) {
        const TokenVocabulary::Entry& t = tokens[i];
        const std::string_view bytes = m_vocabulary->bytesOf(t);
        size_t d = std::min<size_t>(t.lcp, valid);
        if (m_depthState.size() < bytes.size() + 1) {
            m_depthState.resize(bytes.size() + 1);
            m_depthTouched.resize(bytes.size() + 1);
        }
        bool alive = true;
        for (; d < bytes.size(); ++d) {
            const int32_t next = step(m_depthState[d], uint8_t(bytes[d]));
            if (next < 0) {
                alive = false;
                break;
            }
            m_depthState[d + 1] = next;
            m_depthTouched[d + 1] = m_depthTouched[d] | uint8_t(m_states[size_t(next)].context);
        }
        if (m_overflow) return false;
        if (alive) {
            // Alive above the cut (a stack left, or the real bottom reached): alive in every
            // state with this cut. Alive only below it: up to what lies there.
            const State& end = m_states[size_t(m_depthState[bytes.size()])];
            if (!end.nodes.empty() || end.accept) split.accepted[size_t(t.id) >> 5] |= 1u << (t.id & 31);
            else split.uncertain.push_back(t.id);
            valid = bytes.size();
            ++i;
            continue;
        }
        valid = d;  // states up to depth d are still those of the following tokens' prefix
        // Dead above the cut; if the prefix went below it on the way, those stacks may live on.
        const bool touched = m_depthTouched[d] != 0;
        if (touched) split.uncertain.push_back(t.id);
        for (++i; i < tokens.size() && tokens[i].lcp > d; ++i)
            if (touched) split.uncertain.push_back(tokens[i].id);
    }
    return true;
}

std::span<const uint32_t> GrammarAutomaton::computeMask(int32_t state, std::span<uint32_t> scratch)
{
    const int32_t cut = cutState(state);
    Split uncached;
    const Split* split = nullptr;
    if (m_states[size_t(cut)].split >= 0) {
        split = &m_splits[size_t(m_states[size_t(cut)].split)];
    } else {
        Split& target = m_splits.size() < kMaxSplits ? m_splits.emplace_back() : uncached;
        const bool ok = computeSplit(cut, target);
        m_splitsComputed.fetch_add(1, std::memory_order_relaxed);
        if (!ok) {
            if (&target != &uncached) m_splits.pop_back();
            return {};
        }
        if (&target != &uncached) m_states[size_t(cut)].split = int32_t(m_splits.size() - 1);
        split = &target;
    }
    Split direct;
    if (split->uncertain.size() * kMaxUncertainShare > m_vocabulary->sorted().size()) {
        // The full state's own walk: nothing is uncertain there.
        if (!computeSplit(state, direct)) return {};
        split = &direct;
    }
    const size_t words = size_t(m_vocabulary->maskWords());
    uint32_t* out = scratch.data();
    std::unique_ptr<uint32_t[]> owned;
    if (m_masks.size() < kMaxMasks) {
        owned.reset(new uint32_t[words]);
        out = owned.get();
    }
    std::copy(split->accepted.begin(), split->accepted.end(), out);
    for (int32_t id : split->uncertain) {
        if ((out[size_t(id) >> 5] >> (id & 31)) & 1u) continue;
        int32_t s = state;
        for (char c : m_vocabulary->tokenBytes(id)) {
            s = step(s, uint8_t(c));
            if (s < 0) break;
        }
        if (m_overflow) return {};
        if (s >= 0) out[size_t(id) >> 5] |= 1u << (id & 31);
    }
    m_masksComputed.fetch_add(1, std::memory_order_relaxed);
    if (!owned) return scratch;
    m_states[size_t(state)].mask = int32_t(m_masks.size());
    m_masks.push_back(std::move(owned));
    return {m_masks.back().get(), words};
}

std::span<const uint32_t> GrammarAutomaton::mask(int32_t state, std::span<uint32_t> scratch)
{
    const size_t words = size_t(m_vocabulary->maskWords());
    {
        std::shared_lock lock(m_mutex);
        if (m_overflow) return {};
        if (state < 0) {
            std::fill(scratch.begin(), scratch.end(), 0u);
            return scratch;
        }
        if (const int32_t cached = m_states[size_t(state)].mask; cached >= 0) {
            m_maskHits.fetch_add(1, std::memory_order_relaxed);
            return {m_masks[size_t(cached)].get(), words};
        }
    }
    std::unique_lock lock(m_mutex);
    if (m_overflow) return {};
    if (const int32_t cached = m_states[size_t(state)].mask; cached >= 0) {  // another row was first
        m_maskHits.fetch_add(1, std::memory_order_relaxed);
        return {m_masks[size_t(cached)].get(), words};
    }
    m_expansions = 0;
    const std::span<const uint32_t> result = computeMask(state, scratch);
    if (m_overflow || result.empty()) {
        m_overflow = true;
        spdlog::warn("structured output: the grammar's parser states outgrew their limits; stopping the request");
        return {};
    }
    return result;
}

bool GrammarAutomaton::fillMask(int32_t state, std::span<uint32_t> mask)
{
    const std::span<const uint32_t> words = this->mask(state, mask);
    if (words.empty()) {
        std::fill(mask.begin(), mask.end(), 0u);
        return false;
    }
    if (words.data() != mask.data()) std::copy(words.begin(), words.end(), mask.begin());
    return true;
}

void GrammarAutomaton::maybeReset()
{
    std::unique_lock lock(m_mutex);
    if (m_states.size() <= kMaxStates && m_masks.size() < kMaxMasks && m_splits.size() < kMaxSplits) return;
    // Masks or splits alone full: drop them; states past their limit: drop every cache but the
    // stack nodes.
    if (m_states.size() <= kMaxStates) {
        if (m_masks.size() >= kMaxMasks) {
            for (State& s : m_states) s.mask = -1;
            m_masks.clear();
        }
        if (m_splits.size() >= kMaxSplits) {
            for (State& s : m_states) s.split = -1;
            m_splits.clear();
        }
        return;
    }
    m_states.clear();
    m_stateIds.clear();
    m_transitions.clear();
    m_masks.clear();
    m_splits.clear();
    m_start = -1;
    m_generation.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<int32_t> GrammarAutomaton::stateNodes(int32_t state)
{
    std::shared_lock lock(m_mutex);
    return state >= 0 ? m_states[size_t(state)].nodes : std::vector<int32_t>{};
}

bool GrammarAutomaton::stateAccepts(int32_t state)
{
    std::shared_lock lock(m_mutex);
    return state >= 0 && m_states[size_t(state)].accept;
}

int32_t GrammarAutomaton::internNodes(const std::vector<int32_t>& nodes, bool accept)
{
    std::unique_lock lock(m_mutex);
    std::vector<int32_t> copy = nodes;
    return intern(std::move(copy), accept, false);
}

GrammarAutomaton::Stats GrammarAutomaton::stats()
{
    std::shared_lock lock(m_mutex);
    Stats s;
    s.states = m_states.size();
    s.nodes = m_nodes.size();
    s.masksComputed = m_masksComputed.load(std::memory_order_relaxed);
    s.maskHits = m_maskHits.load(std::memory_order_relaxed);
    s.splitsComputed = m_splitsComputed.load(std::memory_order_relaxed);
    return s;
}

}  // namespace brook::structured
