// RequestOutputProcessor: turns one request's sampled tokens into stream updates: incremental
// detokenization, stop strings (held back until they cannot match), stop tokens, min_tokens,
// max_tokens and max_model_len, in vLLM's order. One per request; engine thread only.
#pragma once

#include "engine/request.h"
#include "engine/incremental_detokenizer.h"
#include "engine/stop_checker.h"

#include <optional>
#include <vector>

namespace brook {

class Tokenizer;

class RequestOutputProcessor {
public:
    RequestOutputProcessor(RequestId id, const Tokenizer& tokenizer, const SamplingParams& params,
                           std::vector<int32_t> eosTokenIds, int numPromptTokens, int maxModelLen,
                           OutputCallback callback);

    // Handles the token just appended to the sequence. Emits an update; returns the finish
    // reason when this token ends the request. outputComplete: the structured output's grammar
    // is complete, so the request stops here ("stop") unless something else ended it.
    std::optional<FinishReason> onToken(const SampleResult& sample, int numOutputTokens, double ttftSeconds,
                                        bool outputComplete = false);
    // Ends the stream with finish_reason "abort" (cancelled, client gone, engine stopping).
    void abort(int numOutputTokens);
    // Prompt tokens found in the prefix cache, reported in every update from the first token on.
    void setNumCachedTokens(int tokens) { m_numCachedTokens = tokens; }
    // Arrival to first scheduled, reported in every update from the first token on.
    void setQueueSeconds(double seconds) { m_queueSeconds = seconds; }

    // Token ids that end generation (eos unless ignore_eos, plus stop_token_ids); also masked
    // by the sampler under min_tokens.
    const std::vector<int32_t>& stopTokenIds() const { return m_stopTokenIds; }

private:
    RequestId m_id;
    SamplingParams m_params;
    std::vector<int32_t> m_eosTokenIds;
    std::vector<int32_t> m_stopTokenIds;
    int m_numPromptTokens;
    int m_maxModelLen;
    OutputCallback m_callback;
    IncrementalDetokenizer m_detokenizer;
    StopChecker m_stopChecker;
    double m_ttftSeconds = 0;
    int m_numCachedTokens = 0;
    double m_queueSeconds = 0;
};

}  // namespace brook
