#include "engine/structured/structured_decoding.h"

#include "engine/tokenizer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace brook::structured {

StructuredDecoding::StructuredDecoding(std::shared_ptr<const Tokenizer> tokenizer, int vocabSize)
    : m_tokenizer(std::move(tokenizer)), m_vocabSize(vocabSize)
{}

std::shared_ptr<const TokenVocabulary> StructuredDecoding::vocabulary()
{
    // Built on the first constrained request (about 0.1 s for ERNIE's 103,424 tokens), not at load.
    std::call_once(m_vocabularyOnce, [&] { m_vocabulary = TokenVocabulary::fromTokenizer(*m_tokenizer, m_vocabSize); });
    return m_vocabulary;
}

Result<std::shared_ptr<GrammarAutomaton>> StructuredDecoding::prepare(const SamplingParams& params)
{
    if (!params.structured.active()) return std::shared_ptr<GrammarAutomaton>();
    return m_cache.automaton(params.structured, vocabulary());
}

void StructuredDecoding::add(RequestId id, std::shared_ptr<GrammarAutomaton> automaton,
                             std::vector<int32_t> stopTokenIds)
{
    if (!automaton) return;
    Entry entry;
    entry.matcher = std::make_unique<GrammarMatcher>(std::move(automaton), stopTokenIds);
    entry.stopTokenIds = std::move(stopTokenIds);
    m_matchers[id] = std::move(entry);
}

void StructuredDecoding::remove(RequestId id) { m_matchers.erase(id); }

void StructuredDecoding::beginStep(size_t rows)
{
    if (m_matchers.empty()) return;
    const size_t words = size_t(m_vocabulary->maskWords());
    if (m_masks.size() < rows) m_masks.resize(rows);
    for (size_t r = 0; r < rows; ++r) m_masks[r].resize(words);
}

std::span<const uint32_t> StructuredDecoding::maskFor(RequestId id, std::span<const int32_t> outputTokens, size_t row)
{
    auto it = m_matchers.find(id);
    if (it == m_matchers.end()) return {};
    Entry& e = it->second;
    std::vector<uint32_t>& mask = m_masks[row];
    if (!e.failed && !e.matcher->syncTo(outputTokens)) {
        spdlog::warn("structured output: request {} holds a token its grammar does not allow", id);
        e.failed = true;
    }
    if (!e.failed && e.matcher->fillMask(mask)) return mask;
    // Nothing may follow: let one stop token through (any token when there is none) and end.
    e.failed = true;
    std::fill(mask.begin(), mask.end(), e.stopTokenIds.empty() ? ~0u : 0u);
    if (!e.stopTokenIds.empty()) mask[size_t(e.stopTokenIds[0]) >> 5] |= 1u << (e.stopTokenIds[0] & 31);
    return mask;
}

bool StructuredDecoding::onToken(RequestId id, int32_t token)
{
    auto it = m_matchers.find(id);
    if (it == m_matchers.end()) return false;
    Entry& e = it->second;
    if (e.failed) return true;
    if (!e.matcher->accept(token)) {
        spdlog::warn("structured output: request {} sampled token {} outside its grammar; stopping it", id, token);
        e.failed = true;
        return true;
    }
    return e.matcher->terminated();
}

}  // namespace brook::structured
