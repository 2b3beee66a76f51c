#include "engine/request_output_processor.h"

#include "engine/tokenizer.h"

#include <algorithm>

namespace brook {

namespace {
bool contains(const std::vector<int32_t>& ids, int32_t id)
{
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}
}  // namespace

RequestOutputProcessor::RequestOutputProcessor(RequestId id, const Tokenizer& tokenizer, const SamplingParams& params,
                                               std::vector<int32_t> eosTokenIds, int numPromptTokens, int maxModelLen,
                                               OutputCallback callback)
    : m_id(id), m_params(params), m_numPromptTokens(numPromptTokens), m_maxModelLen(maxModelLen),
      m_callback(std::move(callback)), m_detokenizer(tokenizer, params.skipSpecialTokens),
      m_stopChecker(params.stop, params.includeStopStrInOutput)
{
    if (!params.ignoreEos) m_eosTokenIds = std::move(eosTokenIds);
    m_stopTokenIds = m_eosTokenIds;
    for (int32_t id : params.stopTokenIds)
        if (!contains(m_stopTokenIds, id)) m_stopTokenIds.push_back(id);
}

std::optional<FinishReason> RequestOutputProcessor::onToken(const SampleResult& sample, int numOutputTokens,
                                                            double ttftSeconds, bool outputComplete)
{
    if (numOutputTokens == 1) m_ttftSeconds = ttftSeconds;
    RequestOutput out;
    out.id = m_id;
    out.newTokenIds = {sample.token};
    out.numPromptTokens = m_numPromptTokens;
    out.numOutputTokens = numOutputTokens;
    out.timeToFirstTokenSeconds = m_ttftSeconds;
    out.queueSeconds = m_queueSeconds;
    out.numCachedTokens = m_numCachedTokens;
    if (m_params.logprobs >= 0) out.logprobs.push_back({sample.token, sample.logprob, sample.topLogprobs});

    std::optional<FinishReason> finish;
    const bool minReached = numOutputTokens >= m_params.minTokens;
    // A stop token ends the request and is not part of the text (vLLM).
    if (minReached && contains(m_stopTokenIds, sample.token)) {
        finish = FinishReason::Stop;
        if (!contains(m_eosTokenIds, sample.token)) out.stopReason = std::to_string(sample.token);
        out.textDelta = m_stopChecker.flush() + m_detokenizer.flush();
    } else {
        const std::string delta = m_detokenizer.push(sample.token);
        StopChecker::Update update = m_stopChecker.push(delta);
        out.textDelta = std::move(update.text);
        if (update.stopped && minReached) {
            finish = FinishReason::Stop;
            out.stopReason = update.matched;
        } else if (outputComplete) {
            finish = FinishReason::Stop;
        } else if (numOutputTokens >= m_params.maxTokens || m_numPromptTokens + numOutputTokens >= m_maxModelLen) {
            finish = FinishReason::Length;
        }
        if (finish == FinishReason::Length || (finish && outputComplete && !update.stopped)) {
            // Nothing more will come: release what the detokenizer and stop checker hold back.
            StopChecker::Update tail = m_stopChecker.push(m_detokenizer.flush());
            out.textDelta += tail.text + m_stopChecker.flush();
        }
    }
    out.finishReason = finish;
    m_callback(out);
    return finish;
}

void RequestOutputProcessor::abort(int numOutputTokens)
{
    RequestOutput out;
    out.id = m_id;
    out.numPromptTokens = m_numPromptTokens;
    out.numOutputTokens = numOutputTokens;
    out.timeToFirstTokenSeconds = m_ttftSeconds;
    out.queueSeconds = m_queueSeconds;
    out.numCachedTokens = m_numCachedTokens;
    out.finishReason = FinishReason::Abort;
    m_callback(out);
}

}  // namespace brook
