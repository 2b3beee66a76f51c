// Compiles a StructuredOutput request to a Grammar, and keeps the automata of recent grammars so
// that requests with the same schema share their parser states and cached token masks.
#pragma once

#include "engine/structured/grammar.h"
#include "engine/structured/grammar_automaton.h"
#include "engine/structured_output.h"

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace brook::structured {

Result<std::shared_ptr<const Grammar>> compileStructuredOutput(const StructuredOutput& output);

// Thread-safe. Holds the automata of the last `capacity` distinct requests.
class StructuredOutputCache {
public:
    explicit StructuredOutputCache(size_t capacity = 32) : m_capacity(capacity) {}
    Result<std::shared_ptr<GrammarAutomaton>> automaton(const StructuredOutput& output,
                                                        const std::shared_ptr<const TokenVocabulary>& vocabulary);

private:
    size_t m_capacity;
    std::mutex m_mutex;
    std::list<std::pair<std::string, std::shared_ptr<GrammarAutomaton>>> m_entries;  // most recent first
};

}  // namespace brook::structured
