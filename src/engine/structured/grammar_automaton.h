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
// one copy of the cached mask.
//
// One automaton serves every request with the same grammar (the engine's StructuredOutputCache).
// Engine thread mostly; the methods lock, so any thread may use it.
#pragma once

#include "engine/structured/grammar.h"
#include "engine/structured/token_vocabulary.h"

#include <cstdint>
#include <memory>
#include <mutex>
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
    // Sets mask bit t (words of 32) for every token whose bytes keep `state` alive. Clears the
    // rest. Returns false when the grammar ran past its work limits (the request should stop).
    bool fillMask(int32_t state, std::span<uint32_t> mask);

    // Drops the caches when they have outgrown their limits (between steps, never inside one);
    // ids from an older generation are then stale.
    void maybeReset();
    uint64_t generation();
    std::vector<int32_t> stateNodes(int32_t state);
    bool stateAccepts(int32_t state);
    int32_t internNodes(const std::vector<int32_t>& nodes, bool accept);

    struct Stats {
        size_t states = 0, nodes = 0, masksComputed = 0, maskHits = 0;
    };
    Stats stats();

private:
    struct State {
        std::vector<int32_t> nodes;  // sorted; each node's position is a byte-set element
        bool accept = false;
        int32_t mask = -1;  // index into m_masks
    };
    struct VectorHash {
        size_t operator()(const std::vector<int32_t>& v) const;
    };

    int32_t node(int32_t position, int32_t parent);
    // Adds the closure of `seed` (expanding rule references and finished alternatives) to m_work.
    void close(int32_t seed, bool& accept);
    int32_t intern(std::vector<int32_t>&& nodes, bool accept);
    int32_t step(int32_t state, uint8_t byte);

    std::mutex m_mutex;
    std::shared_ptr<const Grammar> m_grammar;
    std::shared_ptr<const TokenVocabulary> m_vocabulary;
    std::vector<std::pair<int32_t, int32_t>> m_nodes;  // (position, parent); parent -1 = bottom
    std::unordered_map<uint64_t, int32_t> m_nodeIds;
    std::vector<State> m_states;
    std::unordered_map<std::vector<int32_t>, int32_t, VectorHash> m_stateIds;  // nodes + accept flag
    std::vector<int32_t> m_transitions;  // [state * 256 + byte]; kUnknown until taken
    std::vector<std::vector<uint32_t>> m_masks;
    int32_t m_start = -1;
    uint64_t m_generation = 0;
    bool m_overflow = false;
    Stats m_stats;
    // Scratch for close().
    std::vector<int32_t> m_work, m_stack;
    std::vector<uint32_t> m_visited;
    uint32_t m_visitMark = 0;
    size_t m_expansions = 0;  // stack nodes expanded by the current call
};

}  // namespace brook::structured
