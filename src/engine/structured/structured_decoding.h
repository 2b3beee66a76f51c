// StructuredDecoding: the engine loop's side of structured outputs. At submit it compiles the
// request (on the caller's thread, through a cache of recent grammars); on the engine thread it
// keeps one GrammarMatcher per constrained request, fills the token mask of each sampled row
// before a step and advances the matcher over the sampled token after it. Both are done for all
// of a step's rows at once, spread over a RowPool (the rows' matchers are independent; their
// shared automaton is safe for concurrent use), so the engine thread's share of a batch-64 step
// is the longest row's, not the sum of 64.
#pragma once

#include "engine/request.h"
#include "engine/structured/grammar_matcher.h"
#include "engine/structured/row_pool.h"
#include "engine/structured/structured_output_compiler.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace brook {
class Tokenizer;
}

namespace brook::structured {

class StructuredDecoding {
public:
    StructuredDecoding(std::shared_ptr<const Tokenizer> tokenizer, int vocabSize);

    // Any thread. The automaton for the request's structured output (nullptr when it has none),
    // or the compile error (InvalidArgument, naming the field).
    Result<std::shared_ptr<GrammarAutomaton>> prepare(const SamplingParams& params);

    // Engine thread from here on.
    void add(RequestId id, std::shared_ptr<GrammarAutomaton> automaton, std::vector<int32_t> stopTokenIds);
    void remove(RequestId id);
    bool empty() const { return m_matchers.empty(); }

    // Call once per step before queueMask: `rows` mask buffers are made available, and the
    // automatons' caches that outgrew their limits are dropped (nothing reads them between steps).
    void beginStep(size_t rows);
    // Asks for the mask of request `id` for its next token, for batch row `row`. Replays output
    // tokens the matcher has not seen (exact after preemption). When the grammar allows nothing,
    // only the first stop token is allowed and the request ends after it.
    void queueMask(RequestId id, std::span<const int32_t> outputTokens, size_t row);
    // Computes the queued masks, in parallel.
    void fillMasks();
    // After fillMasks: row `row`'s mask (empty span: unconstrained), valid until the next beginStep.
    std::span<const uint32_t> maskOf(size_t row) const;

    // After the step: the sampled token of each constrained row, advanced in parallel; onToken
    // then returns the result for these tokens without doing the work again.
    void acceptTokens(std::span<const std::pair<RequestId, int32_t>> tokens);
    // After the token is appended: true when the output is complete (the grammar accepts and
    // nothing else may follow) or cannot go on, so the request should stop.
    bool onToken(RequestId id, int32_t token);

    // Threads for the per-row work (0: RowPool::defaultThreads()); before the first step.
    void setThreads(int threads) { m_threads = threads; }

private:
    struct Entry {
        std::unique_ptr<GrammarMatcher> matcher;
        std::vector<int32_t> stopTokenIds;
        bool failed = false;  // the grammar cannot go on: stop after this token
        // acceptTokens' result for `acceptedToken`, taken by the next onToken.
        bool hasResult = false;
        bool result = false;
        int32_t acceptedToken = -1;
    };
    struct MaskJob {
        RequestId id = 0;
        Entry* entry = nullptr;
        std::span<const int32_t> outputTokens;
        size_t row = 0;
    };
    std::span<const uint32_t> computeMask(RequestId id, Entry& e, std::span<const int32_t> outputTokens, size_t row);
    bool advance(RequestId id, Entry& e, int32_t token);
    // Whether `jobs` rows' work is worth waking the pool for (see kParallelWalkPieces).
    bool worthThePool(size_t jobs) const;
    RowPool& pool();

    std::shared_ptr<const TokenVocabulary> vocabulary();

    std::shared_ptr<const Tokenizer> m_tokenizer;
    int m_vocabSize;
    std::once_flag m_vocabularyOnce;
    std::shared_ptr<const TokenVocabulary> m_vocabulary;
    StructuredOutputCache m_cache;
    std::unordered_map<RequestId, Entry> m_matchers;
    std::vector<std::vector<uint32_t>> m_masks;  // per row: scratch for masks edited per request
    std::vector<std::span<const uint32_t>> m_rowMasks;
    std::vector<MaskJob> m_maskJobs;
    std::vector<size_t> m_slowJobs;  // of m_maskJobs: those that are not a cached mask
    std::vector<std::tuple<RequestId, Entry*, int32_t>> m_tokenJobs;
    int m_threads = 0;
    std::unique_ptr<RowPool> m_pool;  // made on the first step with two constrained rows
};

}  // namespace brook::structured
