// QualityMetrics: how far a quantized model's next-token distributions are from a reference
// model's on the same text (brook-bench quality). Per position it compares two logit rows
// (reference P, quantized Q) and the token that actually came next:
//   top-1 agreement  argmax P == argmax Q
//   KL(P || Q)       sum_v P(v) (log P(v) - log Q(v)), in nats, computed in double from
//                    log-softmax so that tiny probabilities neither underflow nor divide by 0
//   log-likelihood   log P(next) and log Q(next); perplexity = exp(-mean log-likelihood)
// Pure arithmetic, no threads: a QualityMetrics belongs to whoever fills it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace brook {

// log-softmax of one logits row, in double.
std::vector<double> logSoftmax(std::span<const float> logits);

// Index of the largest logit (the first one on ties).
int32_t argmaxIndex(std::span<const float> logits);

// KL(P || Q) in nats, P = softmax(reference), Q = softmax(candidate); rows of equal length.
double klDivergence(std::span<const float> reference, std::span<const float> candidate);

struct QualitySummary {
    int64_t positions = 0;       // rows compared
    double top1Agreement = 0.0;  // fraction of positions whose argmax agree, 0..1
    double meanKl = 0.0;         // mean KL(P_ref || P_q), nats
    double maxKl = 0.0;
    double referencePerplexity = 0.0;  // exp(-mean log P_ref(next token))
    double candidatePerplexity = 0.0;  // exp(-mean log P_q(next token))
    double perplexityRatio() const { return referencePerplexity > 0 ? candidatePerplexity / referencePerplexity : 0.0; }
};

class QualityMetrics {
public:
    // One position: both models' logits rows [V] and the id of the token that followed.
    void add(std::span<const float> reference, std::span<const float> candidate, int32_t nextToken);
    // Every position of a text at once: logits [n, V] each; row i is followed by tokens[i + 1],
    // so the last row (nothing follows it) is not counted.
    void addSequence(std::span<const float> reference, std::span<const float> candidate,
                     std::span<const int32_t> tokens, int vocabSize);

    QualitySummary summary() const;

private:
    int64_t m_positions = 0;
    int64_t m_agreements = 0;
    double m_klSum = 0.0;
    double m_klMax = 0.0;
    double m_referenceLogLikelihood = 0.0;
    double m_candidateLogLikelihood = 0.0;
};

}  // namespace brook
