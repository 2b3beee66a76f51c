#include "engine/structured/structured_decoding.h"

#include "engine/tokenizer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace brook::structured {

namespace {
// Waking the pool costs more than it saves unless the rows' vocabulary walks are long. On the
// H200's 16-core host, 64 rows of one schema over a 1,200-piece vocabulary took 0.78 ms a step
// on 8 threads against 0.20 ms on the engine thread alone (structured_mask_bench --rows 64), and
// end to end the pool cost 41% of batch-64 throughput against 25% without it; with ERNIE's
// 103,424 pieces 8 threads cut 6.1 ms to 1.9 ms. So: parallel from two full ERNIE-sized walks.
constexpr size_t kParallelWalkPieces = 2 * 103424;
}  // namespace

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

bool StructuredDecoding::worthThePool(size_t jobs) const
{
    return jobs >= 2 && m_threads != 1 && jobs * m_vocabulary->sorted().size() >= kParallelWalkPieces;
}

RowPool& StructuredDecoding::pool()
{
    if (!m_pool) m_pool = std::make_unique<RowPool>(m_threads);
    return *m_pool;
}

void StructuredDecoding::beginStep(size_t rows)
{
    m_maskJobs.clear();
    m_rowMasks.assign(rows, {});
    if (m_matchers.empty()) return;
    // Between steps nothing holds a mask span or runs in an automaton: the one time its caches
    // may be dropped. Usually one schema serves every row: skip repeats cheaply.
    const GrammarAutomaton* last = nullptr;
    for (auto& [id, e] : m_matchers) {
        GrammarAutomaton* a = &e.matcher->automaton();
        if (a == last) continue;
        a->maybeReset();
        last = a;
    }
    const size_t words = size_t(m_vocabulary->maskWords());
    if (m_masks.size() < rows) m_masks.resize(rows);
    for (size_t r = 0; r < rows; ++r) m_masks[r].resize(words);
}

void StructuredDecoding::queueMask(RequestId id, std::span<const int32_t> outputTokens, size_t row)
{
    auto it = m_matchers.find(id);
    if (it == m_matchers.end()) return;
    m_maskJobs.push_back({id, &it->second, outputTokens, row});
}

void StructuredDecoding::fillMasks()
{
    // Most rows' masks are cached (a pointer each): taken here, on the engine thread, so that
    // the workers are woken only for the rows that need a vocabulary walk or a replay.
    m_slowJobs.clear();
    for (size_t i = 0; i < m_maskJobs.size(); ++i) {
        const MaskJob& job = m_maskJobs[i];
        Entry& e = *job.entry;
        if (!e.failed && size_t(e.matcher->numAccepted()) == job.outputTokens.size())
            if (const std::span<const uint32_t> words = e.matcher->cachedMask(); !words.empty()) {
                m_rowMasks[job.row] = words;
                continue;
            }
        m_slowJobs.push_back(i);
    }
    const auto one = [this](size_t k) {
        const MaskJob& job = m_maskJobs[m_slowJobs[k]];
        m_rowMasks[job.row] = computeMask(job.id, *job.entry, job.outputTokens, job.row);
    };
    if (!worthThePool(m_slowJobs.size())) {
        for (size_t k = 0; k < m_slowJobs.size(); ++k) one(k);
        return;
    }
    pool().run(m_slowJobs.size(), one);
}

std::span<const uint32_t> StructuredDecoding::maskOf(size_t row) const
{
    return row < m_rowMasks.size() ? m_rowMasks[row] : std::span<const uint32_t>();
}

std::span<const uint32_t> StructuredDecoding::computeMask(RequestId id, Entry& e, std::span<const int32_t> outputTokens,
                                                          size_t row)
{
    std::vector<uint32_t>& scratch = m_masks[row];
    if (!e.failed && !e.matcher->syncTo(outputTokens)) {
        spdlog::warn("structured output: request {} holds a token its grammar does not allow", id);
        e.failed = true;
    }
    if (!e.failed)
        if (const std::span<const uint32_t> words = e.matcher->mask(scratch); !words.empty()) return words;
    // Nothing may follow: let one stop token through (any token when there is none) and end.
    e.failed = true;
    std::fill(scratch.begin(), scratch.end(), e.stopTokenIds.empty() ? ~0u : 0u);
    if (!e.stopTokenIds.empty()) scratch[size_t(e.stopTokenIds[0]) >> 5] |= 1u << (e.stopTokenIds[0] & 31);
    return scratch;
}

void StructuredDecoding::acceptTokens(std::span<const std::pair<RequestId, int32_t>> tokens)
{
    // As fillMasks: a token through transitions already taken is advanced here; the workers get
    // those that need new parser states.
    m_tokenJobs.clear();
    for (const auto& [id, token] : tokens) {
        auto it = m_matchers.find(id);
        if (it == m_matchers.end()) continue;
        Entry& e = it->second;
        e.acceptedToken = token;
        e.hasResult = true;
        if (e.failed) {
            e.result = true;
        } else if (e.matcher->tryAcceptCached(token)) {
            e.result = e.matcher->terminated();
        } else {
            e.hasResult = false;
            m_tokenJobs.emplace_back(id, &e, token);
        }
    }
    const auto one = [this](size_t i) {
        auto [id, e, token] = m_tokenJobs[i];
        e->result = advance(id, *e, token);
        e->hasResult = true;
    };
    if (!worthThePool(m_tokenJobs.size())) {
        for (size_t i = 0; i < m_tokenJobs.size(); ++i) one(i);
        return;
    }
    pool().run(m_tokenJobs.size(), one);
}

bool StructuredDecoding::onToken(RequestId id, int32_t token)
{
    auto it = m_matchers.find(id);
    if (it == m_matchers.end()) return false;
    Entry& e = it->second;
    if (e.hasResult && e.acceptedToken == token) {
        e.hasResult = false;
        return e.result;
    }
    e.hasResult = false;
    return advance(id, e, token);
}

bool StructuredDecoding::advance(RequestId id, Entry& e, int32_t token)
{
    if (e.failed) return true;
    if (!e.matcher->accept(token)) {
        spdlog::warn("structured output: request {} sampled token {} outside its grammar; stopping it", id, token);
        e.failed = true;
        return true;
    }
    return e.matcher->terminated();
}

}  // namespace brook::structured
