#include "engine/structured/grammar_automaton.h"

#include "engine/huge_pages.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <mutex>
#include <thread>

namespace brook::structured {

namespace {

// Soft limits: past them the caches start over (states, transitions, masks) or the request stops
// (stack nodes, the stacks of one state).
constexpr size_t kMaxStates = 16384;
// Cached masks: at most this many bytes of them per automaton (1,290 masks of ERNIE's 103,424
// tokens; 512 of them recomputed 1,409 masks in structured_mask_bench --rows 64 --steps 128 where
// 4,096 recomputed 1,030), and at most kMaxMasks whatever the vocabulary.
constexpr size_t kMaxMaskBytes = size_t(16) << 20;
constexpr size_t kMaxMasks = 4096;
constexpr size_t kMaxSplits = 256;
constexpr size_t kMaxNodes = size_t(4) << 20;
constexpr size_t kMaxStacksPerState = 20000;
// Stack nodes expanded by one call (a mask, an advance): bounds the time a hostile grammar can
// take in one step (about a second at worst) before the request is stopped.
constexpr size_t kMaxExpansionsPerCall = 10'000'000;
// Frames kept when a state is cut for its mask split. Deeper keeps more tokens certain; shallower
// lets more states share one split. A JSON value's rules sit 2-4 frames deep (character, repeat,
// string, object), the containers' positions (which array item) below them: with the people
// schema over 6,000 tokens (splits made on the first ask), 3 frames compute 2,894 splits for
// 6,000 new states and halve the mean mask time; 6 frames share nothing (structured_mask_bench).
constexpr int kContextDepth = 3;
// A split whose uncertain tokens are more than this share of the vocabulary costs more to finish
// per state (one walk per token) than walking the full state's trie: then the state is walked.
constexpr size_t kMaxUncertainShare = 8;
// Masks asked under one cut state before its split is made. structured_mask_bench, people schema:
// with 1,200 pieces and 128 tokens per row (little comes back) a split on the 2nd ask costs +50%
// of the serial mask time and on the 4th nothing; with 103,424 pieces over 1,500 tokens per row
// the 4th ask saves 30% (0.72 against 1.03 ms per step of 4 rows), the 2nd 23%.
constexpr uint32_t kAsksBeforeSplit = 4;
// The position of the context sentinel node: no element has it.
constexpr int32_t kContextPosition = -3;

}  // namespace

size_t GrammarAutomaton::VectorHash::operator()(const std::vector<int32_t>& v) const
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
    for (int32_t x : v) h = (h ^ uint32_t(x)) * 0x100000001B3ull + (h >> 29);
    return size_t(h);
}

void GrammarAutomaton::BlockDeleter::operator()(void* p) const { freeHugePageBacked(p, bytes); }

GrammarAutomaton::Block GrammarAutomaton::allocateBlock(size_t bytes)
{
    return Block(allocateHugePageBacked(bytes), BlockDeleter{bytes});
}

GrammarAutomaton::Chunk::Chunk()
{
    for (auto& t : transitions) t.store(kUnknown, std::memory_order_relaxed);
}

GrammarAutomaton::GrammarAutomaton(std::shared_ptr<const Grammar> grammar,
                                   std::shared_ptr<const TokenVocabulary> vocabulary)
    : m_grammar(std::move(grammar)), m_vocabulary(std::move(vocabulary)),
      m_maxMasks(std::clamp<size_t>(kMaxMaskBytes / (size_t(m_vocabulary->maskWords()) * 4 + 4), 64, kMaxMasks))
{
    m_contextNode = node(kContextPosition, -1);
    // Each mask is followed by its any-bit word, padded to a cache line.
    m_maskStride = (size_t(m_vocabulary->maskWords()) + 1 + 15) / 16 * 16;
    m_masksPerSlab = std::max<size_t>(1, (size_t(2) << 20) / (m_maskStride * 4));
}

GrammarAutomaton::~GrammarAutomaton()
{
    // The chunks live in blocks this object owns: end them before the blocks go.
    for (size_t i = 0; i < m_chunksInUse; ++i) m_chunks[i].load(std::memory_order_relaxed)->~Chunk();
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
    const int32_t id = m_numStates.load(std::memory_order_relaxed);
    if (size_t(id) >= 4 * kMaxStates) m_overflow = true;
    const size_t chunk = size_t(id) >> kChunkShift;
    if (chunk >= kMaxChunks) {
        m_overflow = true;
        return kDead;
    }
    if (!m_chunks[chunk].load(std::memory_order_relaxed)) {
        if (m_chunkBlocks.size() <= chunk) m_chunkBlocks.push_back(allocateBlock(sizeof(Chunk)));
        m_chunks[chunk].store(new (m_chunkBlocks[chunk].get()) Chunk(), std::memory_order_release);
        m_chunksInUse = chunk + 1;
    }
    m_stateIds.emplace(nodes, id);
    nodes.pop_back();
    State& s = state(id);
    s.nodes = std::move(nodes);
    s.accept = accept;
    s.context = context;
    m_chunks[chunk].load(std::memory_order_relaxed)->flags[id & (kChunkStates - 1)] =
        uint8_t((context ? kFlagContext : 0) | (accept || !s.nodes.empty() ? kFlagAlive : 0));
    // Other threads learn the id only through a transition stored after this (release), or from
    // a call that returns it under the mutex.
    m_numStates.store(id + 1, std::memory_order_release);
    return id;
}

int32_t GrammarAutomaton::startState()
{
    if (const int32_t start = m_start.load(std::memory_order_acquire); start >= 0) return start;
    std::lock_guard lock(m_mutex);
    if (const int32_t start = m_start.load(std::memory_order_relaxed); start >= 0) return start;
    m_expansions = 0;
    m_work.clear();
    ++m_visitMark;
    bool accept = false, context = false;
    for (int32_t start : m_grammar->alternativeStarts(m_grammar->rootRule())) close(node(start, -1), accept, context);
    const int32_t start = intern(std::move(m_work), accept, false);
    m_work = {};
    m_start.store(start, std::memory_order_release);
    return start;
}

int32_t GrammarAutomaton::step(int32_t from, uint8_t byte)
{
    if (const int32_t cached = slot(from, byte).load(std::memory_order_relaxed); cached != kUnknown) return cached;
    const auto& elements = m_grammar->elements();
    const auto& sets = m_grammar->byteSets();
    m_work.clear();
    ++m_visitMark;
    bool accept = false, context = false;
    bool any = false;
    for (int32_t x : state(from).nodes) {
        const auto [position, parent] = m_nodes[size_t(x)];
        if (!sets[size_t(elements[size_t(position)].value)].has(byte)) continue;
        any = true;
        close(node(position + 1, parent), accept, context);
        if (m_overflow) break;
    }
    int32_t next = kDead;
    if (any && !m_overflow && (accept || context || !m_work.empty())) next = intern(std::move(m_work), accept, context);
    m_work = {};
    if (m_overflow) return kDead;  // not cached: the request stops anyway
    slot(from, byte).store(next, std::memory_order_release);
    return next;
}

int32_t GrammarAutomaton::computeTransition(int32_t from, uint8_t byte, size_t& expansions)
{
    std::lock_guard lock(m_mutex);
    m_expansions = expansions;
    const int32_t computed = step(from, byte);
    expansions = m_expansions;
    return computed;
}

int32_t GrammarAutomaton::advance(int32_t from, std::string_view bytes)
{
    size_t expansions = 0;
    for (char c : bytes) {
        if (from < 0) return kDead;
        from = transition(from, uint8_t(c), expansions);
    }
    return from;
}

bool GrammarAutomaton::accepts(int32_t id) { return id >= 0 && state(id).accept; }

bool GrammarAutomaton::terminated(int32_t id) { return id >= 0 && state(id).accept && state(id).nodes.empty(); }

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

int32_t GrammarAutomaton::cutState(int32_t id)
{
    if (const int32_t known = state(id).cut.load(std::memory_order_acquire); known >= 0) return known;
    std::lock_guard lock(m_mutex);
    if (const int32_t known = state(id).cut.load(std::memory_order_relaxed); known >= 0) return known;
    const State& s = state(id);
    std::vector<int32_t> nodes;
    nodes.reserve(s.nodes.size());
    bool cut = false;
    for (int32_t x : s.nodes) nodes.push_back(cutNode(x, cut));
    // Equal node lists intern to one id: a shallow state is its own cut.
    int32_t result = cut ? intern(std::move(nodes), s.accept, false) : id;
    if (result < 0) result = id;  // no room for the cut state: walk the state itself
    state(result).cut.store(result, std::memory_order_release);
    state(id).cut.store(result, std::memory_order_release);
    return result;
}

bool GrammarAutomaton::walk(int32_t from, std::span<uint32_t> accepted, std::vector<int32_t>& uncertain,
                            size_t& expansions)
{
    std::fill(accepted.begin(), accepted.end(), 0u);
    uncertain.clear();
    // Depth-first over the flat trie: depthState[d] is the state after the current token's first
    // d bytes, valid up to `valid`, and depthTouched[d] whether a stack returned below the cut on
    // the way there; a dead prefix skips every following token that shares it.
    thread_local std::vector<int32_t> depthState;
    thread_local std::vector<uint8_t> depthTouched;
    const auto& tokens = m_vocabulary->sorted();
    depthState.assign(1, from);
    depthTouched.assign(1, 0);
    size_t valid = 0;
    for (size_t i = 0; i < tokens.size();) {
        const TokenVocabulary::Entry& t = tokens[i];
        const std::string_view bytes = m_vocabulary->bytesOf(t);
        size_t d = std::min<size_t>(t.lcp, valid);
        if (depthState.size() < bytes.size() + 1) {
            depthState.resize(bytes.size() + 1);
            depthTouched.resize(bytes.size() + 1);
        }
        bool alive = true;
        for (; d < bytes.size(); ++d) {
            const int32_t next = transition(depthState[d], uint8_t(bytes[d]), expansions);
            if (next < 0) {
                alive = false;
                break;
            }
            depthState[d + 1] = next;
            depthTouched[d + 1] = depthTouched[d] | (flags(next) & kFlagContext);
        }
        if (m_overflow.load(std::memory_order_relaxed)) return false;
        if (alive) {
            // Alive above the cut (a stack left, or the real bottom reached): alive in every
            // state with this cut. Alive only below it: up to what lies there.
            if (flags(depthState[bytes.size()]) & kFlagAlive) accepted[size_t(t.id) >> 5] |= 1u << (t.id & 31);
            else uncertain.push_back(t.id);
            valid = bytes.size();
            ++i;
            continue;
        }
        valid = d;  // states up to depth d are still those of the following tokens' prefix
        // Dead above the cut; if the prefix went below it on the way, those stacks may live on.
        const bool touched = depthTouched[d] != 0;
        if (touched) uncertain.push_back(t.id);
        for (++i; i < tokens.size() && tokens[i].lcp > d; ++i)
            if (touched) uncertain.push_back(tokens[i].id);
    }
    return true;
}

std::span<const uint32_t> GrammarAutomaton::computeMask(int32_t id, std::span<uint32_t> scratch)
{
    size_t expansions = 0;
    std::vector<int32_t> none;
    const int32_t cut = cutState(id);
    const Split* split = cut == id ? nullptr : state(cut).split.load(std::memory_order_acquire);
    // A split pays when its cut state comes back often (the same value in array item after
    // item); until then walking the state itself is cheaper (a split's walk builds a second set
    // of states, below the cut) and also takes the transitions its next token will need.
    if (!split && (cut == id || state(cut).asked.fetch_add(1, std::memory_order_relaxed) + 1 < kAsksBeforeSplit)) {
        if (!walk(id, scratch, none, expansions)) return {};
    } else {
        std::unique_ptr<Split> fresh;
        if (!split) {
            // Walked unlocked: rows of one schema that miss at the same time walk side by side
            // (two may walk the same cut state; the first to finish publishes it).
            fresh = std::make_unique<Split>();
            fresh->accepted.resize(scratch.size());
            const bool ok = walk(cut, fresh->accepted, fresh->uncertain, expansions);
            m_splitsComputed.fetch_add(1, std::memory_order_relaxed);
            if (!ok) return {};
            std::lock_guard lock(m_mutex);
            split = state(cut).split.load(std::memory_order_relaxed);
            if (!split && m_ownedSplits.size() < kMaxSplits) {
                m_ownedSplits.push_back(std::move(fresh));
                split = m_ownedSplits.back().get();
                state(cut).split.store(split, std::memory_order_release);
            }
        }
        // A mask made from a split must find it again (maskAllows()): with no room to keep one,
        // the state is walked.
        if (!split || split->uncertain.size() * kMaxUncertainShare > m_vocabulary->sorted().size()) {
            // Too much depends on what lies below the cut: walk the state itself.
            if (!walk(id, scratch, none, expansions)) return {};
        } else {
            std::copy(split->accepted.begin(), split->accepted.end(), scratch.begin());
            for (int32_t token : split->uncertain) {
                if ((scratch[size_t(token) >> 5] >> (token & 31)) & 1u) continue;
                int32_t s = id;
                for (char c : m_vocabulary->tokenBytes(token)) {
                    s = transition(s, uint8_t(c), expansions);
                    if (s < 0) break;
                }
                if (m_overflow.load(std::memory_order_relaxed)) return {};
                if (s >= 0) scratch[size_t(token) >> 5] |= 1u << (token & 31);
            }
        }
    }
    m_masksComputed.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(m_mutex);
    if (const uint32_t* cached = state(id).mask.load(std::memory_order_relaxed))
        return {cached, scratch.size()};  // another row published it meanwhile (the same words)
    if (m_numMasks >= m_maxMasks) return scratch;
    // One word more, after the mask: whether any bit is set, so cachedMask() need not scan.
    const size_t slab = m_numMasks / m_masksPerSlab;
    if (slab == m_maskSlabs.size()) m_maskSlabs.push_back(allocateBlock(m_masksPerSlab * m_maskStride * 4));
    uint32_t* words = static_cast<uint32_t*>(m_maskSlabs[slab].get()) + (m_numMasks % m_masksPerSlab) * m_maskStride;
    ++m_numMasks;
    std::copy(scratch.begin(), scratch.end(), words);
    words[scratch.size()] = std::any_of(scratch.begin(), scratch.end(), [](uint32_t w) { return w != 0; });
    state(id).mask.store(words, std::memory_order_release);
    return {words, scratch.size()};
}

std::span<const uint32_t> GrammarAutomaton::mask(int32_t id, std::span<uint32_t> scratch)
{
    const size_t words = size_t(m_vocabulary->maskWords());
    if (m_overflow.load(std::memory_order_acquire)) return {};
    if (id < 0) {
        std::fill(scratch.begin(), scratch.end(), 0u);
        return scratch;
    }
    if (const uint32_t* cached = state(id).mask.load(std::memory_order_acquire)) {
        m_maskHits.fetch_add(1, std::memory_order_relaxed);
        return {cached, words};
    }
    const std::span<const uint32_t> result = computeMask(id, scratch.first(words));
    if (result.empty() || m_overflow.load(std::memory_order_acquire)) {
        if (!m_overflow.exchange(true))
            spdlog::warn("structured output: the grammar's parser states outgrew their limits; stopping the request");
        return {};
    }
    return result;
}

bool GrammarAutomaton::maskAllows(int32_t id, int32_t token)
{
    if (id < 0 || token < 0 || token >= m_vocabulary->vocabSize()) return false;
    const auto bit = [token](const uint32_t* words) { return ((words[size_t(token) >> 5] >> (token & 31)) & 1u) != 0; };
    if (const uint32_t* cached = state(id).mask.load(std::memory_order_acquire)) return bit(cached);
    // Not cached (the cache was full): the split's accepted tokens are the ones whose transitions
    // the mask did not take; its uncertain ones it took from the state itself.
    const int32_t cut = state(id).cut.load(std::memory_order_acquire);
    if (cut < 0 || cut == id) return false;
    const Split* split = state(cut).split.load(std::memory_order_acquire);
    return split && bit(split->accepted.data());
}

std::span<const uint32_t> GrammarAutomaton::cachedMask(int32_t id)
{
    if (id < 0 || m_overflow.load(std::memory_order_relaxed)) return {};
    const uint32_t* cached = state(id).mask.load(std::memory_order_acquire);
    const size_t words = size_t(m_vocabulary->maskWords());
    if (!cached || !cached[words]) return {};
    m_maskHits.fetch_add(1, std::memory_order_relaxed);
    return {cached, words};
}

int32_t GrammarAutomaton::advanceCached(int32_t from, std::string_view bytes)
{
    for (char c : bytes) {
        if (from < 0) return from;
        from = slot(from, uint8_t(c)).load(std::memory_order_acquire);
    }
    return from;
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
    std::lock_guard lock(m_mutex);
    const auto states = size_t(m_numStates.load(std::memory_order_relaxed));
    if (states <= kMaxStates && m_numMasks < m_maxMasks && m_ownedSplits.size() < kMaxSplits) return;
    // Masks or splits alone full: drop them; states past their limit: drop every cache but the
    // stack nodes.
    if (states <= kMaxStates) {
        if (m_numMasks >= m_maxMasks) {
            for (int32_t id = 0; id < int32_t(states); ++id) state(id).mask.store(nullptr, std::memory_order_relaxed);
            m_numMasks = 0;  // the slabs stay, for the next masks
        }
        if (m_ownedSplits.size() >= kMaxSplits) {
            for (int32_t id = 0; id < int32_t(states); ++id) state(id).split.store(nullptr, std::memory_order_relaxed);
            m_ownedSplits.clear();
        }
        return;
    }
    for (size_t i = 0; i < m_chunksInUse; ++i) {
        m_chunks[i].load(std::memory_order_relaxed)->~Chunk();  // the block stays, for the next states
        m_chunks[i].store(nullptr, std::memory_order_relaxed);
    }
    m_chunksInUse = 0;
    m_numStates.store(0, std::memory_order_relaxed);
    m_stateIds.clear();
    m_numMasks = 0;
    m_ownedSplits.clear();
    m_start.store(-1, std::memory_order_relaxed);
    m_generation.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<int32_t> GrammarAutomaton::stateNodes(int32_t id)
{
    return id >= 0 ? state(id).nodes : std::vector<int32_t>{};
}

bool GrammarAutomaton::stateAccepts(int32_t id) { return id >= 0 && state(id).accept; }

int32_t GrammarAutomaton::internNodes(const std::vector<int32_t>& nodes, bool accept)
{
    std::lock_guard lock(m_mutex);
    std::vector<int32_t> copy = nodes;
    return intern(std::move(copy), accept, false);
}

GrammarAutomaton::Stats GrammarAutomaton::stats()
{
    std::lock_guard lock(m_mutex);
    Stats s;
    s.states = size_t(m_numStates.load(std::memory_order_relaxed));
    s.nodes = m_nodes.size();
    s.masksComputed = m_masksComputed.load(std::memory_order_relaxed);
    s.maskHits = m_maskHits.load(std::memory_order_relaxed);
    s.splitsComputed = m_splitsComputed.load(std::memory_order_relaxed);
    return s;
}

}  // namespace brook::structured
