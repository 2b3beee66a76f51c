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
// from any number of threads at once (a step's rows are filled in parallel). Whatever is cached
// is read without a lock: states live in fixed chunks that never move, and a transition, a
// state's mask, split or cut is published by one atomic store after the data it points to is
// complete. Only a miss that must create something (a transition's closure, a state, a cut)
// takes the mutex, and only for that; the vocabulary walks themselves run unlocked, so rows that
// compute masks at the same time do so side by side. maybeReset() is the exception: it must run
// while no other call is in flight and no span from mask() is still being read (the engine calls
// it between steps).
#pragma once

#include "engine/structured/grammar.h"
#include "engine/structured/token_vocabulary.h"

#include <atomic>
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
    static constexpr int32_t kUnknown = -2;  // a transition not taken yet

    GrammarAutomaton(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocabulary);
    ~GrammarAutomaton();
    GrammarAutomaton(const GrammarAutomaton&) = delete;
    GrammarAutomaton& operator=(const GrammarAutomaton&) = delete;

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
    // The cached mask of `state`, computing nothing: empty when there is none yet, or when it
    // allows no token (mask() then says what to do). O(1): the engine takes these on its own
    // thread and hands only the rest to its workers.
    std::span<const uint32_t> cachedMask(int32_t state);
    // advance() through transitions already taken only: kUnknown at the first one that is not.
    int32_t advanceCached(int32_t state, std::string_view bytes);
    // mask(), copied into `mask`. Returns false when the grammar ran past its work limits.
    bool fillMask(int32_t state, std::span<uint32_t> mask);
    // The grammar ran past its work limits (for good: mask() answers empty from then on, and
    // advance() kDead wherever it would have to compute something).
    bool overLimits() const { return m_overflow.load(std::memory_order_acquire); }
    // Whether the mask computed for `state` allowed `token`, computing nothing: for a token whose
    // advance() ran past the work limits. A mask made from a cut state's split holds tokens whose
    // full transitions were never taken (their successors may be the ones past the limits); a
    // mask walked over the state itself took every allowed token's transitions already.
    bool maskAllows(int32_t state, int32_t token);

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
    // A cut state's tokens: accepted whatever lies below the cut, and those that depend on it.
    struct Split {
        std::vector<uint32_t> accepted;
        std::vector<int32_t> uncertain;
    };
    struct State {
        std::vector<int32_t> nodes;  // sorted; each node's position is a byte-set element
        bool accept = false;
        bool context = false;  // cut states only: a stack returned into the cut-off part
        // Set once, published after what they point to is complete; owned by m_owned*.
        std::atomic<const uint32_t*> mask{nullptr};
        std::atomic<const Split*> split{nullptr};  // cut states
        std::atomic<int32_t> cut{-1};    // this state with its stacks cut at kContextDepth (itself if shallower)
        std::atomic<uint32_t> asked{0};  // cut states: masks asked under this cut so far
    };
    static constexpr int kChunkShift = 10;
    static constexpr int32_t kChunkStates = 1 << kChunkShift;
    static constexpr size_t kMaxChunks = 68;
    // States and their transitions ([state * 256 + byte], kUnknown until taken), in blocks that
    // never move once made, so readers need no lock.
    // flags[]: what the vocabulary walks read of each state they pass, packed so a walk touches
    // one byte, not the whole State.
    static constexpr uint8_t kFlagContext = 1, kFlagAlive = 2;  // alive: stacks left or accepting
    struct Chunk {
        State states[kChunkStates];
        uint8_t flags[kChunkStates] = {};
        std::atomic<int32_t> transitions[size_t(kChunkStates) * 256];
        Chunk();
    };
    struct VectorHash {
        size_t operator()(const std::vector<int32_t>& v) const;
    };

    State& state(int32_t id)
    {
        return m_chunks[size_t(id) >> kChunkShift].load(std::memory_order_acquire)->states[id & (kChunkStates - 1)];
    }
    std::atomic<int32_t>& slot(int32_t id, uint8_t byte)
    {
        return m_chunks[size_t(id) >> kChunkShift]
            .load(std::memory_order_acquire)
            ->transitions[size_t(id & (kChunkStates - 1)) * 256 + byte];
    }
    // The transition, computed under the mutex when not yet taken. `expansions` counts the stack
    // nodes expanded for the caller's whole call, against kMaxExpansionsPerCall.
    int32_t transition(int32_t state, uint8_t byte, size_t& expansions)
    {
        const int32_t next = slot(state, byte).load(std::memory_order_acquire);
        return next != kUnknown ? next : computeTransition(state, byte, expansions);
    }
    int32_t computeTransition(int32_t state, uint8_t byte, size_t& expansions);
    uint8_t flags(int32_t id)
    {
        return m_chunks[size_t(id) >> kChunkShift].load(std::memory_order_acquire)->flags[id & (kChunkStates - 1)];
    }
    int32_t cutState(int32_t state);
    // Walks the vocabulary from `state`, setting the bits of the tokens alive above the cut in
    // `accepted` (zeroed first) and listing those that reach below it; false past the work limits.
    bool walk(int32_t state, std::span<uint32_t> accepted, std::vector<int32_t>& uncertain, size_t& expansions);
    std::span<const uint32_t> computeMask(int32_t state, std::span<uint32_t> scratch);

    // Under m_mutex.
    int32_t node(int32_t position, int32_t parent);
    // Adds the closure of `seed` (expanding rule references and finished alternatives) to m_work.
    void close(int32_t seed, bool& accept, bool& context);
    int32_t intern(std::vector<int32_t>&& nodes, bool accept, bool context);
    int32_t step(int32_t state, uint8_t byte);
    int32_t cutNode(int32_t x, bool& cut);

    std::mutex m_mutex;  // writers; readers of published data take none
    std::shared_ptr<const Grammar> m_grammar;
    std::shared_ptr<const TokenVocabulary> m_vocabulary;
    std::vector<std::pair<int32_t, int32_t>> m_nodes;  // (position, parent); parent -1 = bottom
    std::unordered_map<uint64_t, int32_t> m_nodeIds;
    int32_t m_contextNode = -1;  // the sentinel below a cut stack
    std::atomic<Chunk*> m_chunks[kMaxChunks] = {};
    // Big blocks (state chunks, mask slabs) on 2 MB pages where Linux gives them, and kept for
    // reuse when the caches are reset: in this VM a fresh 4 KB page costs ~15 us on first touch,
    // which made page faults a third of the engine thread's structured time.
    struct BlockDeleter {
        size_t bytes = 0;
        void operator()(void* p) const;
    };
    using Block = std::unique_ptr<void, BlockDeleter>;
    static Block allocateBlock(size_t bytes);
    std::vector<Block> m_chunkBlocks;  // m_chunkBlocks[i] holds chunk i while it is in use
    size_t m_chunksInUse = 0;
    std::atomic<int32_t> m_numStates{0};
    std::unordered_map<std::vector<int32_t>, int32_t, VectorHash> m_stateIds;  // nodes + flags
    std::vector<Block> m_maskSlabs;
    size_t m_maskStride = 0, m_masksPerSlab = 0;  // in words; masks per slab
    size_t m_numMasks = 0;                        // masks handed out from the slabs
    size_t m_maxMasks;                            // for this vocabulary's mask size
    std::vector<std::unique_ptr<Split>> m_ownedSplits;
    std::atomic<int32_t> m_start{-1};
    std::atomic<uint64_t> m_generation{0};
    std::atomic<bool> m_overflow{false};
    std::atomic<size_t> m_masksComputed{0}, m_maskHits{0}, m_splitsComputed{0};
    // Scratch for close().
    std::vector<int32_t> m_work, m_stack;
    std::vector<uint32_t> m_visited;
    uint32_t m_visitMark = 0;
    size_t m_expansions = 0;  // stack nodes expanded by the current call
};

}  // namespace brook::structured
