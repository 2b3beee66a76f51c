// StructuredDecoding: the engine loop's side of structured outputs. At submit it compiles the
// request (on the caller's thread, through a cache of recent grammars); on the engine thread it
// keeps one GrammarMatcher per constrained request, fills the token mask of each sampled row
// before a step and advances the matcher over the sampled token after it.
#pragma once

#include "engine/request.h"
#include "engine/structured/grammar_matcher.h"
#include "engine/structured/structured_output_compiler.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
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

    // Call once per step before maskFor: `rows` mask buffers are made available.
    void beginStep(size_t rows);
    // The mask of request `id` for its next token in buffer `row` (empty span: unconstrained).
    // Replays output tokens the matcher has not seen (exact after preemption). When the grammar
    // allows nothing, only the first stop token is allowed and the request ends after it.
    std::span<const uint32_t> maskFor(RequestId id, std::span<const int32_t> outputTokens, size_t row);
    // After the token is appended: true when the output is complete (the grammar accepts and
    // nothing else may follow) or cannot go on, so the request should stop.
    bool onToken(RequestId id, int32_t token);

private:
    struct Entry {
        std::unique_ptr<GrammarMatcher> matcher;
        std::vector<int32_t> stopTokenIds;
        bool failed = false;  // the grammar cannot go on: stop after this token
    };
    std::shared_ptr<const TokenVocabulary> vocabulary();

    std::shared_ptr<const Tokenizer> m_tokenizer;
    int m_vocabSize;
    std::once_flag m_vocabularyOnce;
    std::shared_ptr<const TokenVocabulary> m_vocabulary;
    StructuredOutputCache m_cache;
    std::unordered_map<RequestId, Entry> m_matchers;
    std::vector<std::vector<uint32_t>> m_masks;
};

}  // namespace brook::structured
