#include "engine/sampling_params.h"

#include <cmath>
#include <sstream>

namespace brook {

namespace {
template <typename T>
Error fieldError(const char* field, const char* rule, T value)
{
    std::ostringstream s;
    s << field << " must be " << rule << ", got " << value;
    return makeError(ErrorCode::InvalidArgument, field, s.str());
}
}  // namespace

Result<void> validateSamplingParams(const SamplingParams& p, int vocabSize)
{
    if (!std::isfinite(p.temperature) || p.temperature < 0.0f)
        return fieldError("temperature", "non-negative", p.temperature);
    if (!(p.topP > 0.0f && p.topP <= 1.0f)) return fieldError("top_p", "in (0, 1]", p.topP);
    if (p.topK < -1) return fieldError("top_k", "-1 (off), 0 (off) or positive", p.topK);
    if (!(p.minP >= 0.0f && p.minP <= 1.0f)) return fieldError("min_p", "in [0, 1]", p.minP);
    if (!(p.repetitionPenalty > 0.0f && std::isfinite(p.repetitionPenalty)))
        return fieldError("repetition_penalty", "positive", p.repetitionPenalty);
    if (!(p.presencePenalty >= -2.0f && p.presencePenalty <= 2.0f))
        return fieldError("presence_penalty", "in [-2, 2]", p.presencePenalty);
    if (!(p.frequencyPenalty >= -2.0f && p.frequencyPenalty <= 2.0f))
        return fieldError("frequency_penalty", "in [-2, 2]", p.frequencyPenalty);
    if (p.maxTokens < 1) return fieldError("max_tokens", "at least 1", p.maxTokens);
    if (p.minTokens < 0 || p.minTokens > p.maxTokens)
        return fieldError("min_tokens", "between 0 and max_tokens", p.minTokens);
    if (p.logprobs > kMaxLogprobs) return fieldError("logprobs", "at most 20", p.logprobs);
    if (p.stop.size() > kMaxStopStrings)
        return fieldError("stop", "a list of at most 64 strings; its length", p.stop.size());
    for (int32_t id : p.stopTokenIds)
        if (id < 0 || id >= vocabSize) return fieldError("stop_token_ids", "inside the vocabulary", id);
    return {};
}

}  // namespace brook
