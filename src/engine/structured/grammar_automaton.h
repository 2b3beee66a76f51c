// GrammarAutomaton: runs a Grammar over bytes and turns parser states into token masks.
//
// A parser state is the set of parse stacks that are still alive (a nondeterministic pushdown
// recognizer, as llama.cpp's GBNF sampler keeps them). A stack is a chain of positions, each an
// index into Grammar::elements(), stored hash-consed (one node per (position, parent)), so equal
// stacks are one id and a state is a sorted list of node ids whose top is a byte set. Tail calls
// push nothing, so right recursion (every repetition) keeps stacks flat.
//
// States are interned and their byte transitions cached as they are first taken: the automaton
// becomes a lazily built DFA. A token mask for a state walks the vocabulary's sorted token list
// (TokenVocabulary) through those transitions, skipping every token under a dead prefix, and is
// cached per state; in JSON string content, where most steps land in the same state, a step costs
// one copy of the cached mask (or none: mask() hands out the cached words).
//
// Most of a token's fate is decided near the top of the stacks, so states that differ only deep
// down (the 57th item of an array against the 58th) share the expensive part of a mask: the walk
// runs over the state with its stacks cut at kContextDepth frames (the cut-off part replaced by a
// "context" sentinel), which sorts tokens into accepted (alive within the kept frames), rejected
// (dead without ever reaching the cut) and uncertain (they reach the cut). That split (XGrammar's
// context-independent/-dependent tokens, by depth) is cached per cut state; a state's mask is then
// the accepted bits plus the uncertain tokens checked one by one against the full state. Exact.
//
// One automaton serves every request with the same grammar (the engine's StructuredOutputCache),
// from any number of threads at once: reads that find everything cached take a shared lock; a
// miss (a new transition, state or mask) takes the exclusive lock. maybeReset() is the exception:
// it must run while no other call is in flight and no span from mask() is still being read (the
// engine calls it between steps).
#pragma once

#include "engine/structured/grammar.h"
#include "engine/structured/token_vocabulary.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <span>
#include <unordered_map>
#include <vector>

namespace brook::structured {

class GrammarAutomaton {
public:
    static constexpr int32_t kDead = -1;

    GrammarAutomaton(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocabulary);

    const TokenVocabulary& vocabulary() const { return *m_vocabulary; }
    const Grammar& grammar() const { return *m_grammar; }

    // The state before any output. State ids stay valid until the caches are reset (see
    // generation()); a holder re-finds its state from stateNodes() then.
    int32_t startState();
    // The state after `bytes`, or kDead.
    int32_t advance(int32_t state, std::string_view bytes);
    bool accepts(int32_t state);
    // Accepting, and no further byte is possible: only the end of output remains.
    bool terminated(int32_t state);
    // The mask of `state` (words of 32, bit t set = token t keeps the state alive): the cached
    // words, valid until the next maybeReset(), or `scratch` filled when the cache is full or the
    // state is dead. An empty span when the grammar ran past its work limits (the request should
    // stop).
    std::span<const uint32_t> mask(int32_t state, std::span<uint32_t> scratch);
    // mask(), copied into `mask`. Returns false when the grammar ran past its work limits.
    bool fillMask(int32_t state, std::span<uint32_t> mask);

    // Drops the caches when they have outgrown their limits; ids from an older generation are then
    // stale. Not concurrently with any other call, nor while a span from mask() is in use.
    void maybeReset();
    uint64_t generation() const { return m_generation.load(std::memory_order_acquire); }
    std::vector<int32_t> stateNodes(int32_t state);
    bool stateAccepts(int32_t state);
    int32_t internNodes(const std::vector<int32_t>& nodes, bool accept);

    struct Stats {
        size_t states = 0, nodes = 0, masksComputed = 0, maskHits = 0, splitsComputed = 0;
    };
    Stats stats();

private:
    struct State {
        std::vector<int32_t> nodes;  // sorted; each node's position is a byte-set element
        bool accept = false;
        bool context = false;  // cut states only: a stack returned into the cut-off part
        int32_t mask = -1;     // index into m_masks
        int32_t cut = -1;      // this state with its stacks cut at kContextDepth (itself if shallower)
        int32_t split = -1;    // cut states: index into m_splits
    };
    // A cut state's tokens: accepted whatever lies below the cut, and those that depend on it.
    struct Split {
        std::vector<uint32_t> accepted;
        std::vector<int32_t> uncertain;
    };
    struct VectorHash {
        size_t operator()(const std::vector<int32_t>& v) const;
    };

    // Everything below runs under the exclusive lock.
    int32_t node(int32_t position, int32_t parent);
    // Adds the closure of `seed` (expanding rule references and finished alternatives) to m_work.
    void close(int32_t seed, bool& accept, bool& context);
    int32_t intern(std::vector<int32_t>&& nodes, bool accept, bool context);
    int32_t step(int32_t state, uint8_t byte);
    int32_t cutState(int32_t state);
    int32_t cutNode(int32_t x, bool& cut);
    // Walks the vocabulary from cut state `state`; false past the work limits.
    bool computeSplit(int32_t state, Split& split);
    std::span<const uint32_t> computeMask(int32_t state, std::span<uint32_t> scratch);

    std::shared_mutex m_mutex;
    std::shared_ptr<const Grammar> m_grammar;
    std::shared_ptr<const TokenVocabulary> m_vocabulary;
    std::vector<std::pair<int32_t, int32_t>> m_nodes;  // (position, parent); parent -1 = bottom
    std::unordered_map<uint64_t, int32_t> m_nodeIds;
    int32_t m_contextNode = -1;  // the sentinel below a cut stack
    std::vector<State> m_states;
    std::unordered_map<std::vector<int32_t>, int32_t, VectorHash> m_stateIds;  // nodes + flags
    std::vector<int32_t> m_transitions;  // [state * 256 + byte]; kUnknown until taken
    // Each mask its own allocation, so the words mask() hands out stay put as the list grows.
    std::vector<std::unique_ptr<uint32_t[]>> m_masks;
    std::vector<Split> m_splits;
    int32_t m_start = -1;
    std::atomic<uint64_t> m_generation{0};
    bool m_overflow = false;
    std::atomic<size_t> m_masksComputed{0}, m_maskHits{0}, m_splitsComputed{0};
    // Scratch for close() and the walks.
    std::vector<int32_t> m_work, m_stack, m_depthState;
    std::vector<uint8_t> m_depthTouched;
    std::vector<uint32_t> m_visited;
    uint32_t m_visitMark = 0;
    size_t m_expansions = 0;  // stack nodes expanded by the current call
};

}  // namespace brook::structured
