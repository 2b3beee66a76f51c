// GrammarMatcher: one request's place in its grammar. The engine asks it for the mask of the
// tokens that may come next (stop tokens only once the grammar accepts) and tells it each token
// that was sampled. Its state is a function of the output tokens alone, so preemption (which
// keeps the tokens and recomputes the cache) leaves it exact; syncTo() replays when a caller
// finds it behind. One thread at a time per matcher; matchers of one automaton may run on
// different threads at once.
#pragma once

#include "engine/structured/grammar_automaton.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace brook::structured {

class GrammarMatcher {
public:
    // stopTokenIds: the ids that end the request (eos unless ignore_eos, stop_token_ids).
    GrammarMatcher(std::shared_ptr<GrammarAutomaton> automaton, std::vector<int32_t> stopTokenIds);

    // The mask for the next token ([maskWords] words, bit set = allowed): the automaton's cached
    // words (valid until its next maybeReset()) when this request adds nothing to them, else
    // `scratch`. An empty span when nothing may follow (a dead end, or the grammar's work
    // limits), and the request must stop.
    std::span<const uint32_t> mask(std::span<uint32_t> scratch);
    // mask() when it is a cached one needing no work: empty otherwise (then call mask()).
    std::span<const uint32_t> cachedMask();
    // accept() when the token's transitions are all taken already and it is not a stop token:
    // false (nothing changed) otherwise, then call accept().
    bool tryAcceptCached(int32_t token);
    // mask(), copied into `mask`; false when nothing may follow.
    bool fillMask(std::span<uint32_t> mask);
    // Advances over a sampled token; false when the grammar does not allow it (then the matcher
    // stays where it was). A token the mask allowed is always taken: when its parser state runs
    // past the grammar's work limits (which a mask made from a cut state's split has not met
    // yet), the matcher is past them too and mask() answers empty from then on.
    bool accept(int32_t token);
    // Replays the output when it holds more tokens than accepted so far.
    bool syncTo(std::span<const int32_t> outputTokens);

    // The output is complete: the grammar accepts and nothing but a stop token may follow.
    bool terminated();
    bool accepting();
    int numAccepted() const { return m_numAccepted; }
    int maskWords() const { return m_automaton->vocabulary().maskWords(); }
    GrammarAutomaton& automaton() { return *m_automaton; }

private:
    int32_t current();  // the state id in the automaton's current generation

    std::shared_ptr<GrammarAutomaton> m_automaton;
    std::vector<int32_t> m_stopTokenIds;
    int32_t m_state = GrammarAutomaton::kDead;
    uint64_t m_generation = 0;
    std::vector<int32_t> m_nodes;  // m_state's stacks, to find it again after a cache reset
    bool m_accept = false;
    bool m_stopped = false;  // a stop token was accepted
    bool m_overLimits = false;  // a token was taken past the grammar's work limits: nothing follows
    int m_numAccepted = 0;
};

}  // namespace brook::structured
