// Fuzz target: structured-output specs as clients send them. The first byte picks the form (a
// JSON schema, a regex, an EBNF grammar), the rest is its text. Compiling answers with a grammar
// or an error, never a crash, a hang or unbounded memory; a grammar is then run for a few dozen
// bytes over a one-byte-per-token vocabulary: every token the mask allows must be accepted, and
// the mask must allow something until the grammar is complete.
#include "engine/structured/grammar_matcher.h"
#include "engine/structured/structured_output_compiler.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

std::shared_ptr<const brook::structured::TokenVocabulary> byteVocabulary()
{
    static auto vocabulary = [] {
        std::vector<std::string> bytes;
        for (int b = 0; b < 256; ++b) bytes.push_back(std::string(1, char(b)));
        bytes.push_back({});  // 256: the stop token
        return std::make_shared<const brook::structured::TokenVocabulary>(std::move(bytes), std::vector<int32_t>{});
    }();
    return vocabulary;
}

}  // namespace

int brookFuzzStructuredOutput(const uint8_t* data, size_t size)
{
    using brook::StructuredOutput;
    if (size == 0) return 0;
    StructuredOutput output;
    const StructuredOutput::Kind kinds[] = {StructuredOutput::Kind::JsonSchema, StructuredOutput::Kind::Regex,
                                            StructuredOutput::Kind::Grammar};
    output.kind = kinds[data[0] % 3];
    output.text.assign(reinterpret_cast<const char*>(data + 1), size - 1);
    auto grammar = brook::structured::compileStructuredOutput(output);
    if (!grammar) {
        if (grammar.failure().message.empty()) std::abort();  // every refusal says why
        return 0;
    }
    auto automaton = std::make_shared<brook::structured::GrammarAutomaton>(*grammar, byteVocabulary());
    brook::structured::GrammarMatcher matcher(automaton, {256});
    std::vector<uint32_t> mask(size_t(byteVocabulary()->maskWords()));
    for (int step = 0; step < 48 && !matcher.terminated(); ++step) {
        if (!matcher.fillMask(mask)) return 0;  // a dead end or the work limits: the engine stops there
        // The allowed token picked by the input's bytes, so runs differ by input.
        std::vector<int32_t> allowed;
        for (int32_t t = 0; t <= 256; ++t)
            if ((mask[size_t(t) >> 5] >> (t & 31)) & 1u) allowed.push_back(t);
        if (allowed.empty()) std::abort();
        const int32_t pick = allowed[data[size_t(step) % size] % allowed.size()];
        if (!matcher.accept(pick)) std::abort();  // the mask allowed what the grammar refuses
    }
    return 0;
}
