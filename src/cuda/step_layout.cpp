#include "cuda/step_layout.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace brook::cuda {

StepShape stepCapacity(StepLimits limits)
{
    const int seqs = std::max(limits.maxNumSeqs, 1);
    return {std::max(limits.maxNumBatchedTokens, seqs), seqs + kPaddingSequences, seqs};
}

StepShape stepShape(std::span<const BatchSequence> batch, int padToSeqs, int padToTokens)
{
    const int realSeqs = int(batch.size());
    if (padToTokens > 0 && (realSeqs > 1 || padToSeqs > 0))
        throw std::invalid_argument("a padded single-sequence step got " + std::to_string(realSeqs) + " sequences");
    // Dummy one-token sequences: up to padToSeqs, or the stand-in for an empty single-sequence step.
    const int dummySeqs = padToTokens > 0 ? 1 - realSeqs : std::max(0, padToSeqs - realSeqs);
    StepShape shape;
    shape.seqs = realSeqs + dummySeqs + (padToTokens > 0 ? kPaddingSequences : 0);
    shape.tokens = dummySeqs;
    shape.sampled = dummySeqs;
    for (const auto& s : batch) {
        shape.tokens += int(s.tokens.size());
        shape.sampled += s.sample ? 1 : 0;
    }
    if (padToTokens > 0) {
        if (shape.tokens > padToTokens)
            throw std::invalid_argument("a step of " + std::to_string(shape.tokens) + " tokens does not fit its " +
                                        std::to_string(padToTokens) + "-token graph");
        shape.tokens = padToTokens;
    }
    return shape;
}

}  // namespace brook::cuda
