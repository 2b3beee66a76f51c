// QualityMetrics: see quality_metrics.h. Everything is done in double: a KL of 1e-4 nats (a
// good 8-bit model) is a sum of 100k terms that must not drown in float rounding.
#include "engine/quality_metrics.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace brook {

std::vector<double> logSoftmax(std::span<const float> logits)
{
    std::vector<double> out(logits.size());
    if (logits.empty()) return out;
    double maxValue = -INFINITY;
    for (float x : logits) maxValue = std::max(maxValue, double(x));
    double sum = 0.0;
    for (float x : logits) sum += std::exp(double(x) - maxValue);
    const double logZ = maxValue + std::log(sum);
    for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - logZ;
    return out;
}

int32_t argmaxIndex(std::span<const float> logits)
{
    return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

namespace {

double klFromLogProbs(const std::vector<double>& logP, const std::vector<double>& logQ)
{
    double kl = 0.0;
    for (size_t i = 0; i < logP.size(); ++i) {
        const double p = std::exp(logP[i]);
        if (p > 0.0) kl += p * (logP[i] - logQ[i]);
    }
    return std::max(kl, 0.0);  // rounding can leave -1e-17 for identical rows
}

}  // namespace

double klDivergence(std::span<const float> reference, std::span<const float> candidate)
{
    assert(reference.size() == candidate.size());
    return klFromLogProbs(logSoftmax(reference), logSoftmax(candidate));
}

void QualityMetrics::add(std::span<const float> reference, std::span<const float> candidate, int32_t nextToken)
{
    assert(reference.size() == candidate.size());
    assert(nextToken >= 0 && size_t(nextToken) < reference.size());
    const std::vector<double> logP = logSoftmax(reference);
    const std::vector<double> logQ = logSoftmax(candidate);
    const double kl = klFromLogProbs(logP, logQ);
    ++m_positions;
    m_agreements += argmaxIndex(reference) == argmaxIndex(candidate) ? 1 : 0;
    m_klSum += kl;
    m_klMax = std::max(m_klMax, kl);
    m_referenceLogLikelihood += logP[size_t(nextToken)];
    m_candidateLogLikelihood += logQ[size_t(nextToken)];
}

void QualityMetrics::addSequence(std::span<const float> reference, std::span<const float> candidate,
                                 std::span<const int32_t> tokens, int vocabSize)
{
    const size_t V = size_t(vocabSize);
    assert(reference.size() == tokens.size() * V && candidate.size() == reference.size());
    for (size_t i = 0; i + 1 < tokens.size(); ++i)
        add(reference.subspan(i * V, V), candidate.subspan(i * V, V), tokens[i + 1]);
}

QualitySummary QualityMetrics::summary() const
{
    QualitySummary s;
    s.positions = m_positions;
    if (m_positions == 0) return s;
    const double n = double(m_positions);
    s.top1Agreement = double(m_agreements) / n;
    s.meanKl = m_klSum / n;
    s.maxKl = m_klMax;
    s.referencePerplexity = std::exp(-m_referenceLogLikelihood / n);
    s.candidatePerplexity = std::exp(-m_candidateLogLikelihood / n);
    return s;
}

}  // namespace brook
