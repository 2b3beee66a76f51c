// Sampler: the CPU sampler and the reference the CUDA one is checked against.
//
// The draw, precisely (GpuSampler reproduces it bit for bit; see engine/sampler_math.h):
//   s_i = logit_i / T (fp32), m = max_i s_i, p_i = samplerProbBits(s_i - m) (an fp32 e^x that is
//   bit-identical on CPU and GPU; the top token has p = 1), w_i = floor(p_i * 2^shift) (integer
//   mass, shift = samplerWeightShift(V)).
//   Candidates are the tokens with w_i > 0 (p below ~2^-46 can never be drawn), ordered by
//   p descending, lower index first on ties. Every filter keeps a prefix of that order:
//     top-k: the first k; top-p: the shortest prefix whose mass C (exact integer sum of w) has
//     double(C) >= double(top_p) * double(mass of the candidates left); min-p: those with
//     p >= min_p (p_max = 1).
//   At least one token always survives; the kept set is always {candidates with key >= floor}
//   (see makeKey), floor = 0 when no filter applies. Then, with Z the kept mass and
//   u = uniform(seed, step), walk the kept tokens in vocabulary index order (ascending token
//   id) with C the running mass (sum of w_j of the kept j <= i): the token is the first kept
//   token with double(C) > u * double(Z); if none (rounding), the kept token with the highest
//   index. The walk order does not change the distribution (an inverse CDF in any fixed order
//   samples p / Z); index order lets the GPU split the walk over contiguous ranges.
//   Masses are exact integers, so the draw does not depend on any summation order: any
//   implementation of this definition picks the same token.
// Nothing sorts the whole row: each (token, p) is packed in a 64-bit key whose integer order is
// the candidate order; top-k is an nth_element, the top-p cut a radix selection on the keys
// (11 bits a level) with a sort of the last few hundred keys only, and the draw one pass in
// index order. Without top-k and min-p (the common request) the top-p cut's first level is a
// histogram of the probabilities themselves, and only the keys of the bucket where the cut falls
// are built. Given other threads (SamplerThreads: the CPU backend's idle pool when it samples
// one row), that path's max, probability and histogram passes (~60% of a draw) run on slices of
// the row at once; each is exact, so the token does not change.
#include "engine/sampler.h"

#include "engine/cpu/sampler_kernels.h"
#include "engine/sampler_math.h"
#include "engine/structured/token_bitmask.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>

namespace brook {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Per-thread scratch, so sampling a token allocates nothing after the first call on a thread.
struct Scratch {
    std::vector<float> raw;         // [V] raw logits, kept for logprobs
    std::vector<uint32_t> probs;    // [V] bits of the unnormalised probabilities of the draw
    std::vector<uint64_t> keys;     // candidate keys (see makeKey): only grows, see keyRoom
    std::vector<uint64_t> subsetA;  // radix-selection working sets
    std::vector<uint64_t> subsetB;
    std::vector<uint64_t> bucketMass;  // the top-p cut's first level (cpu::bucketMasses)
    std::vector<uint64_t> sliceMass;   // ... per slice of the row when threads split it
    std::vector<int32_t> counts;       // [V] occurrences in the output (all zero between calls)
    std::vector<uint8_t> seen;         // [V] repetition-penalty marks (all zero between calls)

    // Room for n keys. The vector only grows: resizing it down to the keys found and back up
    // to V on the next draw zero-filled 827 KB at ERNIE's vocabulary, ~4% of a draw.
    std::span<uint64_t> keyRoom(size_t n)
    {
        if (keys.size() < n) keys.resize(n);
        return {keys.data(), n};
    }
};

Scratch& scratch()
{
    thread_local Scratch s;
    return s;
}

// Key order (descending) = value descending, then index ascending. `orderedBits` must be a
// monotone map of the value to uint32.
uint64_t makeKey(uint32_t orderedBits, int32_t token)
{
    return (static_cast<uint64_t>(orderedBits) << 32) | static_cast<uint32_t>(~static_cast<uint32_t>(token));
}
int32_t keyToken(uint64_t key) { return static_cast<int32_t>(~static_cast<uint32_t>(key)); }
// For positive floats the IEEE bit pattern is already monotone, so probability bits make keys.
// samplerWeight of a candidate's key without branches: a candidate has p >= 2^-shift and p <= 1,
// so its scale e - 150 + shift lies in [-23, 39], the mantissa (< 2^24) shifted left by 39 fits
// in 63 bits, and shifting that right by 39 - scale (0..62) is exactly floor(m * 2^scale).
uint64_t keyWeight(uint64_t key, int shift)
{
    const auto bits = static_cast<uint32_t>(key >> 32);
    const uint64_t mantissa = (bits & 0x7FFFFFu) | 0x800000u;
    const int scale = static_cast<int>(bits >> 23) - 150 + shift;
    return (mantissa << 39) >> (39 - scale);
}

struct Crossing {
    uint64_t key = 0;         // the element where the running mass crosses the goal
    uint64_t cumulative = 0;  // mass of the keys >= it
};

// Among `keys` that are >= `floor`, walking from the largest key down with the running mass C
// starting at `before` (the mass of the candidates above every one of them), returns the first
// element at which C reaches `goal` (double(C) >= goal), the top-p cut. Radix selection
// narrows to one bucket per level, so the work is a few passes over shrinking sets plus one
// small sort. Masses are exact, so the result is the definition's, whatever the summation order.
Crossing findCrossing(std::span<const uint64_t> keys, uint64_t floor, double goal, int weightShift, uint64_t before = 0)
{
    constexpr int kBits = 11;
    constexpr size_t kBuckets = size_t{1} << kBits;
    constexpr size_t kSortBelow = 512;
    Scratch& s = scratch();
    auto crosses = [&](uint64_t cumulative) { return static_cast<double>(cumulative) >= goal; };

    // The current subset: at first all keys >= floor (no copy when every key qualifies).
    const uint64_t* data = keys.data();
    size_t size = keys.size();
    std::vector<uint64_t>* owned = nullptr;
    if (floor != 0) {
        owned = &s.subsetA;
        owned->clear();
        for (uint64_t key : keys)
            if (key >= floor) owned->push_back(key);
        data = owned->data();
        size = owned->size();
    }
    // `before`: the mass of the candidates above the current subset.
    for (int shift = 64 - kBits; size > kSortBelow && shift >= 0; shift -= kBits) {
        // Two interleaved histograms: neighbouring keys often share a bucket, and one array would
        // chain every add on the previous one's store.
        uint64_t mass0[kBuckets] = {}, mass1[kBuckets] = {};
        size_t i = 0;
        for (; i + 2 <= size; i += 2) {
            mass0[(data[i] >> shift) & (kBuckets - 1)] += keyWeight(data[i], weightShift);
            mass1[(data[i + 1] >> shift) & (kBuckets - 1)] += keyWeight(data[i + 1], weightShift);
        }
        if (i < size) mass0[(data[i] >> shift) & (kBuckets - 1)] += keyWeight(data[i], weightShift);
        size_t chosen = kBuckets;
        size_t lowestNonEmpty = kBuckets;
        uint64_t chosenMass = 0;
        for (size_t b = kBuckets; b-- > 0;) {
            const uint64_t mass = mass0[b] + mass1[b];
            if (mass == 0) continue;  // every candidate has a weight >= 1
            lowestNonEmpty = b;
            chosenMass = mass;
            if (crosses(before + mass)) {
                chosen = b;
                break;
            }
            before += mass;
        }
        if (chosen == kBuckets) {  // rounding ran past the end: descend into the smallest keys
            chosen = lowestNonEmpty;
            before -= chosenMass;
        }
        std::vector<uint64_t>* next = owned == &s.subsetA ? &s.subsetB : &s.subsetA;
        next->clear();
        for (size_t k = 0; k < size; ++k)
            if (((data[k] >> shift) & (kBuckets - 1)) == chosen) next->push_back(data[k]);
        owned = next;
        data = owned->data();
        size = owned->size();
        if (shift < kBits) break;  // every bit examined
    }
    if (!owned) {  // small enough to sort at once: copy (the caller's keys stay as they are)
        owned = &s.subsetA;
        owned->assign(keys.begin(), keys.end());
    }
    std::vector<uint64_t>* subset = owned;

    std::sort(subset->begin(), subset->end(), std::greater<>());
    Crossing crossing;
    for (uint64_t key : *subset) {
        before += keyWeight(key, weightShift);
        crossing = {key, before};
        if (crosses(before)) break;
    }
    return crossing;
}

// The top-p cut over the whole candidate set without building every key: the candidates' mass
// per bucket of probability bits (one pass), the bucket where the running mass from the top
// reaches the goal, and findCrossing over that bucket's keys alone (a few hundred for a flat
// row, fewer for a peaked one). Buckets are ranges of the key order, so the crossing is the one
// findCrossing finds over all keys. Floor 0 keeps every candidate: top_p >= 1, and a walk that
// rounding lets run past the last bucket (findCrossing then ends on the smallest key, which keeps
// the same set). The cumulative mass is 0 when there is no candidate.
// A row cut into slices of whole 64-token blocks, one per part of SamplerThreads (at least
// kMinSliceTokens each: below that a hand-off costs more than it saves).
class RowSlices {
public:
    static constexpr size_t kMinSliceTokens = 16384;
    static constexpr int kMaxSlices = 64;  // per-slice results live in fixed arrays: no allocation

    // `threads` must outlive the slices.
    RowSlices(const SamplerThreads& threads, size_t n) : m_threads(threads), m_n(n)
    {
        const size_t most = std::clamp<size_t>(n / kMinSliceTokens, 1, kMaxSlices);
        m_count = threads.run ? static_cast<int>(std::min<size_t>(std::max(threads.parts, 1), most)) : 1;
        m_size = ((n + size_t(m_count) - 1) / size_t(m_count) + 63) / 64 * 64;
    }
    int count() const { return m_count; }
    // fn(slice, begin, end) for every slice, on the threads when there is more than one.
    template <typename Fn>
    void run(const Fn& fn) const
    {
        auto one = [&](int slice) {
            const size_t begin = std::min(m_n, size_t(slice) * m_size);
            fn(slice, begin, std::min(m_n, begin + m_size));
        };
        if (m_count == 1) one(0);
        else m_threads.run(m_count, one);
    }

private:
    const SamplerThreads& m_threads;
    size_t m_n;
    int m_count = 1;
    size_t m_size = 0;
};

// Fills a slice [begin, end) of the probabilities (cpu::probRow). A plain struct, not a
// std::function over a lambda: its captures would not fit the small buffer, and a draw would
// allocate.
struct ProbSlice {
    const float* logits;
    float temperature;
    float maxScaled;
    uint32_t* probs;
    cpu::CpuIsa isa;

    void operator()(size_t begin, size_t end) const  // masked or NaN: 0
    {
        cpu::probRow(logits + begin, end - begin, temperature, maxScaled, probs + begin, isa);
    }
};

// cpu::bucketMasses over the row's slices, each slice's probabilities filled just before its
// histogram (one hand-off to the threads for both): per-slice histograms (exact integer sums)
// added up.
uint64_t bucketMassesOverSlices(const std::vector<uint32_t>& probs, const ProbSlice& fill, uint32_t minBits, int shift,
                                uint64_t* masses, size_t buckets, size_t* candidates, const RowSlices& slices,
                                cpu::CpuIsa isa)
{
    if (slices.count() == 1) {
        fill(0, probs.size());
        return cpu::bucketMasses(probs.data(), probs.size(), minBits, shift, masses, candidates, isa);
    }
    Scratch& s = scratch();
    const auto parts = size_t(slices.count());
    if (masses) s.sliceMass.assign(parts * buckets, 0);
    std::array<uint64_t, RowSlices::kMaxSlices> totals{};
    std::array<size_t, RowSlices::kMaxSlices> counts{};
    uint64_t* const sliceMass = s.sliceMass.data();
    slices.run([&](int slice, size_t begin, size_t end) {
        fill(begin, end);
        totals[size_t(slice)] =
            cpu::bucketMasses(probs.data() + begin, end - begin, minBits, shift,
                              masses ? sliceMass + size_t(slice) * buckets : nullptr, &counts[size_t(slice)], isa);
    });
    uint64_t mass = 0;
    *candidates = 0;
    for (size_t p = 0; p < parts; ++p) {
        mass += totals[p];
        *candidates += counts[p];
        if (masses)
            for (size_t b = 0; b < buckets; ++b) masses[b] += s.sliceMass[p * buckets + b];
    }
    return mass;
}

// The top-p cut over probabilities that `fill` writes into `probs` as it goes.
Crossing topPWithoutKeys(const std::vector<uint32_t>& probs, const ProbSlice& fill, uint32_t minBits, int shift,
                         float topP, const RowSlices& slices, cpu::CpuIsa isa)
{
    Scratch& s = scratch();
    size_t candidates = 0;
    if (!(topP < 1.0f)) {
        const uint64_t mass = bucketMassesOverSlices(probs, fill, minBits, shift, nullptr, 0, &candidates, slices, isa);
        return Crossing{0, candidates ? mass : 0};
    }
    const size_t buckets = cpu::probBucketCount(minBits);
    s.bucketMass.assign(buckets, 0);
    const uint64_t mass =
        bucketMassesOverSlices(probs, fill, minBits, shift, s.bucketMass.data(), buckets, &candidates, slices, isa);
    if (candidates == 0) return Crossing{0, 0};
    const double goal = static_cast<double>(std::max(topP, 0.0f)) * static_cast<double>(mass);
    uint64_t before = 0;
    for (size_t b = s.bucketMass.size(); b-- > 0;) {
        const uint64_t bucketMass = s.bucketMass[b];
        if (bucketMass == 0) continue;  // every candidate weighs at least 1
        if (static_cast<double>(before + bucketMass) >= goal) {
            const auto bucketBits = static_cast<uint32_t>(b) + (minBits >> cpu::kProbBucketShift);
            const std::span<uint64_t> keys = s.keyRoom(probs.size());  // keysInBucket writes up to V
            return findCrossing(keys.first(cpu::keysInBucket(probs.data(), probs.size(), bucketBits, keys.data(), isa)),
                                0, goal, shift, before);
        }
        before += bucketMass;
    }
    return Crossing{0, mass};
}

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

int32_t drawToken(std::span<const float> logits, const SamplingParams& params, double u, const SamplerThreads& threads)
{
    Scratch& s = scratch();
    const float temperature = params.temperature;

    const cpu::CpuIsa isa = cpu::activeCpuIsa();
    // Slices only for the common path below; top-k and min-p keep to the calling thread.
    const bool keyless = !(params.topK > 0) && !(params.minP > 0.0f);
    static const SamplerThreads kCallerOnly;
    const RowSlices slices(keyless ? threads : kCallerOnly, logits.size());
    std::array<float, RowSlices::kMaxSlices> sliceMax{};
    slices.run([&](int slice, size_t begin, size_t end) {
        sliceMax[size_t(slice)] = cpu::maxValue(logits.data() + begin, end - begin, isa);
    });
    float maxLogit = kNegInf;
    for (int slice = 0; slice < slices.count(); ++slice)
        if (sliceMax[size_t(slice)] > maxLogit) maxLogit = sliceMax[size_t(slice)];  // as one pass: NaN never wins
    if (!std::isfinite(maxLogit)) return argmax(logits);                             // all masked, or +inf present
    const float maxScaled = maxLogit / temperature;
    if (!std::isfinite(maxScaled)) return argmax(logits);  // temperature so small it overflows: greedy

    // Two passes: the probabilities alone in a tight loop, then the keys (or, in the common case,
    // the probabilities' histogram). The passes are cpu/sampler_kernels' (AVX-512 where the CPU
    // has it), bit-identical to samplerProbBits / makeKey / samplerWeight lane by lane.
    std::vector<uint32_t>& probs = s.probs;
    probs.resize(logits.size());
    const ProbSlice fill{logits.data(), temperature, maxScaled, probs.data(), isa};
    const int shift = samplerWeightShift(static_cast<int>(logits.size()));
    const uint32_t minBits = floatBits(1.0f) - (static_cast<uint32_t>(shift) << 23);  // p >= 2^-shift: w >= 1
    // Without top-k and min-p, keys are needed only where the top-p cut falls.
    if (keyless) {
        const Crossing cut = topPWithoutKeys(probs, fill, minBits, shift, params.topP, slices, isa);
        if (cut.cumulative == 0) return argmax(logits);  // no candidate (cannot happen: p_max = 1)
        return cpu::drawIndex(probs.data(), probs.size(), minBits, cut.key, shift,
                              u * static_cast<double>(cut.cumulative), isa);
    }

    fill(0, probs.size());
    std::span<uint64_t> keys = s.keyRoom(logits.size());
    uint64_t mass = 0;
    keys = keys.first(cpu::buildKeys(probs.data(), probs.size(), minBits, shift, keys.data(), &mass, isa));
    if (keys.empty()) return argmax(logits);

    // The kept set is always {candidate keys >= floor}: a prefix of the candidate order.
    uint64_t floor = 0;
    if (params.topK > 0 && static_cast<size_t>(params.topK) < keys.size()) {
        // The k-th largest key is the floor: the keys >= it are exactly the top k.
        const auto kth = keys.begin() + (params.topK - 1);
        std::nth_element(keys.begin(), kth, keys.end(), std::greater<>());
        floor = *kth;
        keys = keys.first(static_cast<size_t>(params.topK));
        mass = 0;
        for (uint64_t key : keys) mass += keyWeight(key, shift);
    }
    if (params.topP < 1.0f) {
        const double goal = static_cast<double>(std::max(params.topP, 0.0f)) * static_cast<double>(mass);
        const Crossing cut = findCrossing(keys, floor, goal, shift);
        floor = cut.key;
        mass = cut.cumulative;
    }
    if (params.minP > 0.0f) {
        // min_p * p_max with p_max = 1; p >= t exactly when its key is >= bits(t) << 32.
        const uint64_t threshold = static_cast<uint64_t>(floatBits(params.minP)) << 32;
        const uint64_t top = *std::max_element(keys.begin(), keys.end());
        floor = std::max(floor, std::min(threshold, top));  // the top token always stays
        mass = 0;
        for (uint64_t key : keys)
            if (key >= floor) mass += keyWeight(key, shift);
    }

    // The draw: one pass in index order, recomputing each token's membership from probs.
    return cpu::drawIndex(probs.data(), probs.size(), minBits, floor, shift, u * static_cast<double>(mass), isa);
}

void fillLogprobs(SampleResult& result, std::span<const float> raw, int topN)
{
    // log_softmax of the raw logits: fp32 differences and exps, summed in double.
    float maxRaw = kNegInf;
    for (float logit : raw)
        if (logit > maxRaw) maxRaw = logit;
    double logSumExp = -std::numeric_limits<double>::infinity();
    if (std::isfinite(maxRaw)) {
        double sum = 0.0;
        for (float logit : raw)
            if (logit > kNegInf) sum += std::exp(logit - maxRaw);
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
    const std::span<uint64_t> keys = scratch().keyRoom(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) keys[i] = makeKey(orderedFloatBits(raw[i]), static_cast<int32_t>(i));
    const auto middle = keys.begin() + static_cast<std::ptrdiff_t>(n);
    std::nth_element(keys.begin(), middle, keys.end(), std::greater<>());
    std::sort(keys.begin(), middle, std::greater<>());
    result.topLogprobs.reserve(n);
    for (size_t i = 0; i < n; ++i) result.topLogprobs.push_back({keyToken(keys[i]), logprobOf(keyToken(keys[i]))});
}

}  // namespace

SampleResult Sampler::sample(std::span<float> logits, const SamplingContext& context, const SamplerThreads& threads)
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

    if (!context.allowedTokens.empty()) structured::applyTokenBitmask(logits, context.allowedTokens);
    const bool wantLogprobs = params.logprobs >= 0;
    if (wantLogprobs) s.raw.assign(logits.begin(), logits.end());

    applyPenalties(logits, context, params);
    if (static_cast<int64_t>(context.outputTokens.size()) < params.minTokens)
        for (int32_t token : context.stopTokenIds)
            if (token >= 0 && token < vocab) logits[token] = kNegInf;

    const bool greedy = !(params.temperature > 0.0f) || params.topK == 1;
    result.token = greedy ? argmax(logits) : drawToken(logits, params, uniform(context.seed, context.step), threads);

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

}  // namespace brook
