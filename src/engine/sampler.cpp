// Sampler: the CPU sampler and the reference the CUDA one is checked against.
//
// The draw, precisely (a GPU kernel reproduces this):
//   s_i = logit_i / T (fp32), m = max_i s_i, p_i = expf(s_i - m) (fp32; so the top token has p = 1).
//   Candidates are the tokens with p_i > 0 (zero-mass tokens can never be drawn), ordered by
//   p descending, lower index first on ties. Every filter keeps a prefix of that order:
//     top-k: the first k; top-p: the shortest prefix whose mass (summed in order, in double)
//     reaches top_p * (mass of the candidates left); min-p: those with p >= min_p (p_max = 1).
//   At least one token always survives. Then, with Z the kept mass (double) and
//   u = uniform(seed, step): walk the kept prefix in order, cum += p_i, and pick the first token
//   with u * Z < cum (the last kept token if rounding runs past the end).
// Only as much of the order as the walk needs gets sorted (nth_element + sort in growing chunks),
// so a peaked distribution over V = 103424 costs about one pass over the row.
#include "engine/sampler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace brook {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Per-thread scratch, so sampling a token allocates nothing after the first call on a thread.
struct Scratch {
    std::vector<float> raw;      // [V] raw logits, kept for logprobs
    std::vector<float> probs;    // [V] unnormalised probabilities p_i
    std::vector<int32_t> order;  // candidate token ids, sorted lazily
    std::vector<int32_t> counts; // [V] occurrences in the output (all zero between calls)
    std::vector<uint8_t> seen;   // [V] repetition-penalty marks (all zero between calls)
};

Scratch& scratch()
{
    thread_local Scratch s;
    return s;
}

// Higher value first; lower index on ties; NaN last.
struct DescendingByValue {
    const float* values;
    bool operator()(int32_t a, int32_t b) const
    {
        const float va = std::isnan(values[a]) ? kNegInf : values[a];
        const float vb = std::isnan(values[b]) ? kNegInf : values[b];
        return va > vb || (va == vb && a < b);
    }
};

int32_t argmax(std::span<const float> logits)
{
    int32_t best = 0;
    float bestValue = kNegInf;
    for (size_t i = 0; i < logits.size(); ++i) {
        if (logits[i] > bestValue) {  // strict: the lowest index wins ties; NaN never wins
            bestValue = logits[i];
            best = static_cast<int32_t>(i);
        }
    }
    return best;
}

void applyPenalties(std::span<float> logits, const SamplingContext& context, const SamplingParams& params)
{
    const auto vocab = static_cast<int32_t>(logits.size());
    Scratch& s = scratch();
    const float repetition = params.repetitionPenalty;
    if (repetition != 1.0f && repetition > 0.0f) {
        // HF rule, once per distinct token of prompt + output.
        s.seen.resize(logits.size(), 0);
        auto penalise = [&](std::span<const int32_t> tokens) {
            for (int32_t token : tokens) {
                if (token < 0 || token >= vocab || s.seen[token]) continue;
                s.seen[token] = 1;
                float& logit = logits[token];
                logit = logit > 0.0f ? logit / repetition : logit * repetition;
            }
        };
        penalise(context.promptTokens);
        penalise(context.outputTokens);
        for (auto tokens : {context.promptTokens, context.outputTokens})
            for (int32_t token : tokens)
                if (token >= 0 && token < vocab) s.seen[token] = 0;
    }
    if (params.frequencyPenalty != 0.0f || params.presencePenalty != 0.0f) {
        // OpenAI rule over the output only: logit -= frequency * count + presence * (count > 0).
        s.counts.resize(logits.size(), 0);
        for (int32_t token : context.outputTokens)
            if (token >= 0 && token < vocab) ++s.counts[token];
        for (int32_t token : context.outputTokens) {
            if (token < 0 || token >= vocab || s.counts[token] == 0) continue;
            logits[token] -= params.frequencyPenalty * static_cast<float>(s.counts[token]) + params.presencePenalty;
            s.counts[token] = 0;  // applied once; also leaves the scratch zeroed
        }
    }
}

// The candidates of the draw, sorted only as far as someone has looked.
class LazyOrder {
public:
    LazyOrder(std::vector<int32_t>& order, const float* probs) : m_order(order), m_less{probs} {}

    // Makes order[0, n) sorted and holding the n largest. Grows in chunks to amortise.
    void ensureSorted(size_t n)
    {
        if (n <= m_sorted) return;
        size_t target = std::min(m_order.size(), std::max({n, m_sorted * 8, size_t{64}}));
        auto first = m_order.begin() + static_cast<std::ptrdiff_t>(m_sorted);
        auto middle = m_order.begin() + static_cast<std::ptrdiff_t>(target);
        if (middle != m_order.end()) std::nth_element(first, middle, m_order.end(), m_less);
        std::sort(first, middle, m_less);
        m_sorted = target;
    }
    int32_t at(size_t i)
    {
        ensureSorted(i + 1);
        return m_order[i];
    }

private:
    std::vector<int32_t>& m_order;
    DescendingByValue m_less;
    size_t m_sorted = 0;
};

int32_t drawToken(std::span<const float> logits, const SamplingParams& params, double u)
{
    Scratch& s = scratch();
    const size_t vocab = logits.size();
    const float temperature = params.temperature;

    float maxLogit = kNegInf;
    for (float logit : logits)
        if (logit > maxLogit) maxLogit = logit;
    if (!std::isfinite(maxLogit)) return argmax(logits);  // all masked, or +inf present
    const float maxScaled = maxLogit / temperature;
    if (!std::isfinite(maxScaled)) return argmax(logits);  // temperature so small it overflows: greedy

    s.probs.resize(vocab);
    s.order.clear();
    for (size_t i = 0; i < vocab; ++i) {
        const float logit = logits[i];
        const float p = logit > kNegInf ? std::exp(logit / temperature - maxScaled) : 0.0f;  // NaN -> 0
        s.probs[i] = p;
        if (p > 0.0f) s.order.push_back(static_cast<int32_t>(i));
    }
    if (s.order.empty()) return argmax(logits);
    const float* probs = s.probs.data();
    DescendingByValue less{probs};

    if (params.topK > 0 && static_cast<size_t>(params.topK) < s.order.size()) {
        std::nth_element(s.order.begin(), s.order.begin() + params.topK, s.order.end(), less);
        s.order.resize(static_cast<size_t>(params.topK));
    }

    LazyOrder order(s.order, probs);
    size_t kept = s.order.size();
    double mass = 0.0;
    for (int32_t token : s.order) mass += probs[token];

    const bool topPActive = params.topP < 1.0f;
    if (topPActive) {
        const double goal = static_cast<double>(std::max(params.topP, 0.0f)) * mass;
        double cumulative = 0.0;
        size_t i = 0;
        while (i < kept) {
            cumulative += probs[order.at(i)];
            ++i;
            if (cumulative >= goal) break;
        }
        kept = i;
        mass = cumulative;
    }
    if (params.minP > 0.0f) {
        const float threshold = params.minP;  // min_p * p_max, and p_max = 1 by construction
        if (topPActive) {
            // The kept prefix is sorted: cut it where p drops under the threshold.
            size_t i = 1;  // the top token always stays
            double cumulative = probs[order.at(0)];
            while (i < kept && probs[order.at(i)] >= threshold) cumulative += probs[order.at(i++)];
            kept = i;
            mass = cumulative;
        } else {
            auto end = std::partition(s.order.begin(), s.order.end(),
                                      [&](int32_t token) { return probs[token] >= threshold; });
            kept = static_cast<size_t>(end - s.order.begin());
            if (kept == 0) {  // min_p > 1 would drop everything: keep the top token
                std::nth_element(s.order.begin(), s.order.begin(), s.order.end(), less);
                kept = 1;
            }
            s.order.resize(kept);
            mass = 0.0;
            for (int32_t token : s.order) mass += probs[token];
        }
    }

    const double target = u * mass;
    double cumulative = 0.0;
    for (size_t i = 0; i < kept; ++i) {
        const int32_t token = order.at(i);
        cumulative += probs[token];
        if (target < cumulative) return token;
    }
    return order.at(kept - 1);
}

void fillLogprobs(SampleResult& result, std::span<const float> raw, int topN)
{
    // log_softmax of the raw logits in double.
    float maxRaw = kNegInf;
    for (float logit : raw)
        if (logit > maxRaw) maxRaw = logit;
    double logSumExp = -std::numeric_limits<double>::infinity();
    if (std::isfinite(maxRaw)) {
        double sum = 0.0;
        for (float logit : raw)
            if (logit > kNegInf) sum += std::exp(static_cast<double>(logit) - maxRaw);
        logSumExp = maxRaw + std::log(sum);
    }
    auto logprobOf = [&](int32_t token) {
        const float logit = raw[token];
        if (std::isnan(logit) || !std::isfinite(logSumExp)) return kNegInf;
        return static_cast<float>(static_cast<double>(logit) - logSumExp);
    };
    result.logprob = logprobOf(result.token);

    const size_t n = std::min(static_cast<size_t>(topN), raw.size());
    result.topLogprobs.clear();
    if (n == 0) return;
    std::vector<int32_t>& order = scratch().order;
    order.resize(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) order[i] = static_cast<int32_t>(i);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      DescendingByValue{raw.data()});
    result.topLogprobs.reserve(n);
    for (size_t i = 0; i < n; ++i) result.topLogprobs.push_back({order[i], logprobOf(order[i])});
}

} // namespace

SampleResult Sampler::sample(std::span<float> logits, const SamplingContext& context)
{
    static const SamplingParams kDefaults;
    const SamplingParams& params = context.params ? *context.params : kDefaults;
    SampleResult result;
    if (logits.empty()) {
        spdlog::error("sampler: empty logits row");
        return result;
    }
    const auto vocab = static_cast<int32_t>(logits.size());
    Scratch& s = scratch();

    const bool wantLogprobs = params.logprobs >= 0;
    if (wantLogprobs) s.raw.assign(logits.begin(), logits.end());

    applyPenalties(logits, context, params);
    if (static_cast<int64_t>(context.outputTokens.size()) < params.minTokens)
        for (int32_t token : context.stopTokenIds)
            if (token >= 0 && token < vocab) logits[token] = kNegInf;

    const bool greedy = !(params.temperature > 0.0f) || params.topK == 1;
    result.token = greedy ? argmax(logits) : drawToken(logits, params, uniform(context.seed, context.step));

    if (wantLogprobs) fillLogprobs(result, s.raw, params.logprobs);
    return result;
}

double Sampler::uniform(uint64_t seed, int step)
{
    // x = seed XOR (step as a 64-bit two's-complement integer * golden-ratio constant, mod 2^64),
    // then one splitmix64 round: z = x + 0x9E3779B97F4A7C15;
    // z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB; z ^= z >> 31.
    // The top 53 bits scaled by 2^-53 give a double in [0, 1).
    constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
    uint64_t z = seed ^ (static_cast<uint64_t>(static_cast<int64_t>(step)) * kGolden);
    z += kGolden;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
}

} // namespace brook
