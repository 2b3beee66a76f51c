// The GPU sampling kernel: one CTA of 1024 threads per row, reproducing Sampler::sample bit for
// bit (engine/sampler.cpp's header comment is the definition; engine/sampler_math.h the math):
//   1. logprobs, if asked, from the raw row: per-thread online max / sum of exps, combined in
//      double; the top-N by a radix search on (ordered raw bits, reversed index) keys.
//   2. edits (penalties, min_tokens mask) in place, each saving the raw logit it overwrote.
//   3. argmax, lowest index on ties: the token of greedy rows, the max of sampled ones.
//   4. sampled rows: every token's probability bits p into scratch, with exact integer weights;
//      top-k, top-p and the draw are radix searches over 64-bit keys (p bits, reversed index)
//      for the first key in descending order whose cumulative (count, mass) meets a goal;
//      min-p is a threshold on the key.
// A radix search takes 11-bit digits from the top. Each level is a histogram of (count, mass)
// in shared memory built with integer atomics (exact, so arrival order cannot change a
// result); once the chosen bucket holds <= 2048 keys they are gathered into shared memory and
// the remaining levels run there. No floating-point atomics; every float reduction has a fixed
// tree; a row's result depends on that row alone.
#include "cuda/cuda_check.h"
#include "cuda/gpu_sampler_kernel.h"
#include "engine/sampler_math.h"

#include <climits>

namespace brook::cuda {

namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr int kDigitBits = 11;
constexpr int kMaxBins = 1 << kDigitBits;
constexpr int kBinsPerThread = kMaxBins / kThreads;
constexpr int kListCapacity = 2048;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr uint32_t kOneBits = 0x3F800000u;  // 1.0f
static_assert(kBinsPerThread * kThreads == kMaxBins, "bins must split evenly over threads");

using u64 = unsigned long long;

struct Pick {
    int bin;             // -1: no non-empty bin
    unsigned count;      // keys in the bin
    u64 mass;
    unsigned aboveCount; // keys in the higher bins of this level
    u64 aboveMass;
};

struct Shared {
    unsigned binCount[kMaxBins];
    u64 binMass[kMaxBins];
    u64 list[kListCapacity];  // the keys of the current bucket, once few enough
    u64 topKeys[kGpuMaxTopLogprobs];
    float topRaw[kGpuMaxTopLogprobs];
    unsigned scanCount[kWarps];
    u64 scanMass[kWarps];
    double reduceF64[kWarps];
    u64 reduceU64[kWarps];
    unsigned reduceU32[kWarps];
    float reduceF32[kWarps];
    int reduceI32[kWarps];
    Pick pick;
    u64 foundKey;
    int listSize;
    int chosenPos;
    int lowestPos;
    int topSize;
    float chosenRaw;
};

// ---- block primitives (fixed reduction trees) ----

struct SumOp {
    template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct MaxOp {
    template <typename T> __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};

template <typename T, typename Op>
__device__ T blockReduce(T value, Op op, T* scratch)
{
    for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_xor_sync(kFullMask, value, offset));
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = value;
    __syncthreads();
    T total = scratch[0];
    for (int w = 1; w < kWarps; ++w) total = op(total, scratch[w]);
    __syncthreads();
    return total;
}

struct ArgMax {
    float value;
    int index;
};

__device__ ArgMax better(ArgMax a, ArgMax b)
{
    if (b.value > a.value) return b;
    if (a.value > b.value) return a;
    return b.index < a.index ? b : a;  // equal values (never NaN here): the lower index
}

__device__ ArgMax blockArgMax(ArgMax best, Shared& sh)
{
    for (int offset = 16; offset > 0; offset /= 2) {
        const ArgMax other{__shfl_xor_sync(kFullMask, best.value, offset), __shfl_xor_sync(kFullMask, best.index, offset)};
        best = better(best, other);
    }
    if ((threadIdx.x & 31) == 0) {
        sh.reduceF32[threadIdx.x / 32] = best.value;
        sh.reduceI32[threadIdx.x / 32] = best.index;
    }
    __syncthreads();
    ArgMax total{sh.reduceF32[0], sh.reduceI32[0]};
    for (int w = 1; w < kWarps; ++w) total = better(total, ArgMax{sh.reduceF32[w], sh.reduceI32[w]});
    __syncthreads();
    return total;
}

// Exclusive prefix sums over threads (in thread order) of a (count, mass) pair.
__device__ void blockExclusiveScan(unsigned& count, u64& mass, Shared& sh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    unsigned c = count;
    u64 m = mass;
    for (int offset = 1; offset < 32; offset *= 2) {
        const unsigned upC = __shfl_up_sync(kFullMask, c, offset);
        const u64 upM = __shfl_up_sync(kFullMask, m, offset);
        if (lane >= offset) {
            c += upC;
            m += upM;
        }
    }
    if (lane == 31) {
        sh.scanCount[warp] = c;
        sh.scanMass[warp] = m;
    }
    __syncthreads();
    if (warp == 0) {
        unsigned wc = sh.scanCount[lane];
        u64 wm = sh.scanMass[lane];
        for (int offset = 1; offset < 32; offset *= 2) {
            const unsigned upC = __shfl_up_sync(kFullMask, wc, offset);
            const u64 upM = __shfl_up_sync(kFullMask, wm, offset);
            if (lane >= offset) {
                wc += upC;
                wm += upM;
            }
        }
        sh.scanCount[lane] = wc;  // inclusive over warps
        sh.scanMass[lane] = wm;
    }
    __syncthreads();
    const unsigned warpC = warp > 0 ? sh.scanCount[warp - 1] : 0u;
    const u64 warpM = warp > 0 ? sh.scanMass[warp - 1] : 0ull;
    count = warpC + c - count;
    mass = warpM + m - mass;
    __syncthreads();
}

// ---- radix search ----

// When the running (count, mass) of keys, walked in descending order, is enough.
struct Goal {
    enum Mode { kCountAtLeast, kMassAtLeast, kMassAbove };
    Mode mode;
    unsigned count;
    double mass;

    __device__ bool met(unsigned c, u64 m) const
    {
        if (mode == kCountAtLeast) return c >= count;
        const double x = static_cast<double>(m);  // correctly rounded, as on the CPU
        return mode == kMassAtLeast ? x >= mass : x > mass;
    }
};

struct Found {
    u64 key;
    unsigned count;  // keys >= key (within the search's floor)
    u64 mass;        // their mass; 0 for count goals, which tally no masses
    bool ok;
};

// Keys of the draw: (probability bits, reversed index); candidates are those with weight >= 1.
struct ProbKeys {
    static constexpr bool kHasMass = true;
    const uint32_t* probs;
    int vocab;
    int indexBits;
    u64 indexMask;
    uint32_t minBits;
    int weightShift;

    __device__ int keyBits() const { return 30 + indexBits; }  // p <= 1: bits < 2^30
    __device__ bool load(int i, u64& key) const
    {
        const uint32_t bits = probs[i];
        key = (static_cast<u64>(bits) << indexBits) | (indexMask - static_cast<u64>(i));
        return bits >= minBits;
    }
    __device__ u64 weight(u64 key) const { return samplerWeight(static_cast<uint32_t>(key >> indexBits), weightShift); }
};

// Keys of the top-N logprobs: (ordered raw logit bits, reversed index); every token counts.
struct RawKeys {
    static constexpr bool kHasMass = false;
    const float* logits;
    int vocab;
    int indexBits;
    u64 indexMask;

    __device__ int keyBits() const { return 32 + indexBits; }
    __device__ bool load(int i, u64& key) const
    {
        key = (static_cast<u64>(orderedFloatBits(logits[i])) << indexBits) | (indexMask - static_cast<u64>(i));
        return true;
    }
    __device__ u64 weight(u64) const { return 0; }  // never called: kHasMass is false
};

// Picks the bin where the goal is first met, walking bins from the highest; if it never is,
// the lowest non-empty bin. Bins [0, bins) of sh.binCount / sh.binMass.
__device__ Pick chooseBin(int bins, unsigned beforeCount, u64 beforeMass, const Goal& goal, Shared& sh)
{
    const int tid = threadIdx.x;
    unsigned c[kBinsPerThread];
    u64 m[kBinsPerThread];
    unsigned sumC = 0;
    u64 sumM = 0;
#pragma unroll
    for (int k = 0; k < kBinsPerThread; ++k) {
        const int pos = tid * kBinsPerThread + k;  // position in descending bin order
        c[k] = pos < bins ? sh.binCount[bins - 1 - pos] : 0u;
        m[k] = pos < bins ? sh.binMass[bins - 1 - pos] : 0ull;
        sumC += c[k];
        sumM += m[k];
    }
    if (tid == 0) {
        sh.chosenPos = INT_MAX;
        sh.lowestPos = -1;
    }
    blockExclusiveScan(sumC, sumM, sh);  // now: the bins before mine in descending order
    unsigned runC = beforeCount + sumC;
    u64 runM = beforeMass + sumM;
    int chosen = INT_MAX, lowest = -1;
#pragma unroll
    for (int k = 0; k < kBinsPerThread; ++k) {
        if (c[k] == 0) continue;
        runC += c[k];
        runM += m[k];
        lowest = tid * kBinsPerThread + k;
        if (chosen == INT_MAX && goal.met(runC, runM)) chosen = lowest;
    }
    if (chosen != INT_MAX) atomicMin(&sh.chosenPos, chosen);
    if (lowest >= 0) atomicMax(&sh.lowestPos, lowest);
    __syncthreads();
    int pos = sh.chosenPos;
    if (pos == INT_MAX) pos = sh.lowestPos;
    if (pos >= 0 && pos / kBinsPerThread == tid) {
        const int k = pos % kBinsPerThread;
        unsigned aboveC = sumC;
        u64 aboveM = sumM;
#pragma unroll
        for (int j = 0; j < kBinsPerThread; ++j) {
            if (j < k) {
                aboveC += c[j];
                aboveM += m[j];
            }
        }
        sh.pick = Pick{bins - 1 - pos, c[k], m[k], aboveC, aboveM};
    }
    __syncthreads();
    Pick pick{-1, 0u, 0ull, 0u, 0ull};
    if (pos >= 0) pick = sh.pick;
    __syncthreads();
    return pick;
}

// Among the valid keys >= floor, walking from the largest down: the first key at which the
// running (count, mass) meets the goal, with that running total; the smallest key if never.
template <class Keys>
__device__ Found radixSearch(const Keys& keys, u64 floor, const Goal& goal, Shared& sh)
{
    const int tid = threadIdx.x;
    const bool withMass = Keys::kHasMass && goal.mode != Goal::kCountAtLeast;  // 64-bit atomics only if needed
    u64 prefix = 0;               // the digits chosen so far
    int shift = keys.keyBits();   // bits below the prefix
    unsigned beforeCount = 0;     // keys above the current bucket
    u64 beforeMass = 0;
    bool inList = false;
    while (shift > 0) {
        const int width = shift < kDigitBits ? shift : kDigitBits;
        const int above = shift;  // bits >= `above` are the prefix
        shift -= width;
        const int bins = 1 << width;
        for (int b = tid; b < bins; b += kThreads) {
            sh.binCount[b] = 0;
            sh.binMass[b] = 0;
        }
        __syncthreads();
        auto tally = [&](u64 key) {
            if ((key >> above) != prefix) return;
            const int bin = static_cast<int>(key >> shift) & (bins - 1);
            atomicAdd(&sh.binCount[bin], 1u);
            if (withMass) atomicAdd(&sh.binMass[bin], keys.weight(key));
        };
        if (inList) {
            const int size = min(sh.listSize, kListCapacity);
            for (int e = tid; e < size; e += kThreads) tally(sh.list[e]);
        } else {
            for (int i = tid; i < keys.vocab; i += kThreads) {
                u64 key;
                if (keys.load(i, key) && key >= floor) tally(key);
            }
        }
        __syncthreads();
        const Pick pick = chooseBin(bins, beforeCount, beforeMass, goal, sh);
        if (pick.bin < 0) return Found{floor, beforeCount, beforeMass, false};
        beforeCount += pick.aboveCount;
        beforeMass += pick.aboveMass;
        prefix = (prefix << width) | static_cast<u64>(pick.bin);
        if (shift == 0) return Found{prefix, beforeCount + pick.count, beforeMass + pick.mass, true};
        if (!inList && pick.count <= kListCapacity) {
            if (tid == 0) sh.listSize = 0;
            __syncthreads();
            for (int i = tid; i < keys.vocab; i += kThreads) {
                u64 key;
                if (keys.load(i, key) && key >= floor && (key >> shift) == prefix) {
                    const int slot = atomicAdd(&sh.listSize, 1);
                    if (slot < kListCapacity) sh.list[slot] = key;
                }
            }
            __syncthreads();
            inList = true;
        }
        if (inList && pick.count == 1) {
            const int size = min(sh.listSize, kListCapacity);
            for (int e = tid; e < size; e += kThreads)
                if ((sh.list[e] >> shift) == prefix) sh.foundKey = sh.list[e];
            __syncthreads();
            const u64 key = sh.foundKey;
            __syncthreads();
            return Found{key, beforeCount + 1, beforeMass + pick.mass, true};
        }
    }
    return Found{floor, beforeCount, beforeMass, false};  // not reached: keyBits > 0
}

// ---- the row's phases ----

// Total weight of the candidates with key >= floor.
__device__ u64 keptMass(const ProbKeys& keys, u64 floor, Shared& sh)
{
    u64 part = 0;
    for (int i = threadIdx.x; i < keys.vocab; i += kThreads) {
        u64 key;
        if (keys.load(i, key) && key >= floor) part += keys.weight(key);
    }
    return blockReduce(part, SumOp{}, sh.reduceU64);
}

// The draw of a sampled row (engine/sampler.cpp drawToken); `best` is the edited row's argmax.
__device__ int drawToken(const float* x, uint32_t* probs, const GpuSampleRow& row, ArgMax best, int vocab,
                         int indexBits, u64 indexMask, int weightShift, Shared& sh)
{
    const int tid = threadIdx.x;
    const int argmaxToken = best.index == INT_MAX ? 0 : best.index;
    if (!isfinite(best.value)) return argmaxToken;  // all masked, or +inf present
    const float temperature = row.temperature;
    const float maxScaled = __fdiv_rn(best.value, temperature);
    if (!isfinite(maxScaled)) return argmaxToken;   // temperature so small it overflows

    const uint32_t minBits = kOneBits - (static_cast<uint32_t>(weightShift) << 23);  // weight >= 1
    // Below e^cut = 2^-(shift + 1) a token has no weight and its bits are never read: skip the
    // exp (most of a real model's vocabulary). 0 is what the CPU's bits amount to there.
    const float cut = -0.6931472f * static_cast<float>(weightShift + 1);
    unsigned count = 0;
    u64 mass = 0, maxKey = 0;
    for (int i = tid; i < vocab; i += kThreads) {
        const float d = __fsub_rn(__fdiv_rn(x[i], temperature), maxScaled);
        const uint32_t bits = d < cut ? 0u : samplerProbBits(d);
        probs[i] = bits;
        if (bits >= minBits) {
            ++count;
            mass += samplerWeight(bits, weightShift);
            const u64 key = (static_cast<u64>(bits) << indexBits) | (indexMask - static_cast<u64>(i));
            maxKey = key > maxKey ? key : maxKey;
        }
    }
    count = blockReduce(count, SumOp{}, sh.reduceU32);   // its barriers also publish probs
    mass = blockReduce(mass, SumOp{}, sh.reduceU64);
    maxKey = blockReduce(maxKey, MaxOp{}, sh.reduceU64);
    if (count == 0) return argmaxToken;

    const ProbKeys keys{probs, vocab, indexBits, indexMask, minBits, weightShift};
    u64 floor = 0;  // the kept set is always {key >= floor}
    if (row.topK > 0 && static_cast<unsigned>(row.topK) < count) {
        const Found found = radixSearch(keys, 0, Goal{Goal::kCountAtLeast, static_cast<unsigned>(row.topK), 0.0}, sh);
        if (!found.ok) return argmaxToken;
        floor = found.key;
        mass = keptMass(keys, floor, sh);
    }
    if (row.topP < 1.0f) {
        const float topP = row.topP < 0.0f ? 0.0f : row.topP;
        const double goal = static_cast<double>(topP) * static_cast<double>(mass);
        const Found found = radixSearch(keys, floor, Goal{Goal::kMassAtLeast, 0u, goal}, sh);
        if (!found.ok) return argmaxToken;
        floor = found.key;
        mass = found.mass;
    }
    if (row.minP > 0.0f) {
        // p >= min_p (p_max = 1) exactly when the key is >= bits(min_p) << indexBits.
        const u64 threshold = static_cast<u64>(floatBits(row.minP)) << indexBits;
        const u64 cut = threshold < maxKey ? threshold : maxKey;  // the top token always stays
        floor = cut > floor ? cut : floor;
        mass = keptMass(keys, floor, sh);
    }
    const double target = row.u * static_cast<double>(mass);
    const Found found = radixSearch(keys, floor, Goal{Goal::kMassAbove, 0u, target}, sh);
    if (!found.ok) return argmaxToken;
    return static_cast<int>(indexMask - (found.key & indexMask));
}

__device__ float logprobOf(float raw, double logSumExp)
{
    if (isnan(raw) || !isfinite(logSumExp)) return -INFINITY;
    return static_cast<float>(static_cast<double>(raw) - logSumExp);
}

__global__ void __launch_bounds__(kThreads)
    gpu_sample_kernel(float* __restrict__ logits, uint32_t* __restrict__ scratch, const GpuSampleRow* __restrict__ rows,
                      GpuSampleEdit* __restrict__ edits, GpuSampleOut* __restrict__ out, int vocab, int weightShift)
{
    __shared__ Shared sh;
    const int tid = threadIdx.x;
    const GpuSampleRow row = rows[blockIdx.x];
    float* x = logits + static_cast<size_t>(blockIdx.x) * vocab;  // [V]
    uint32_t* probs = scratch + static_cast<size_t>(blockIdx.x) * vocab;
    int indexBits = 1;
    while ((1ll << indexBits) < vocab) ++indexBits;  // indices fit in indexBits bits
    const u64 indexMask = (1ull << indexBits) - 1;

    // 1. Logprobs of the raw logits: log-sum-exp, then the top-N.
    double logSumExp = -INFINITY;
    int topCount = 0;
    if (row.logprobs >= 0) {
        float localMax = -INFINITY, localSum = 0.0f;  // sum of exp(x - localMax)
        for (int i = tid; i < vocab; i += kThreads) {
            const float v = x[i];
            if (!(v > -INFINITY)) continue;  // -inf and NaN add nothing
            if (v > localMax) {
                localSum = localSum * expf(localMax - v) + 1.0f;
                localMax = v;
            } else {
                localSum += expf(v - localMax);
            }
        }
        const float rowMax = blockReduce(localMax, MaxOp{}, sh.reduceF32);
        if (isfinite(rowMax)) {
            const double part = localMax > -INFINITY ? static_cast<double>(localSum) * exp(static_cast<double>(localMax) - rowMax) : 0.0;
            logSumExp = rowMax + log(blockReduce(part, SumOp{}, sh.reduceF64));
        }
        const int n = min(row.logprobs, min(vocab, kGpuMaxTopLogprobs));
        if (n > 0) {
            const RawKeys keys{x, vocab, indexBits, indexMask};
            const Found nth = radixSearch(keys, 0, Goal{Goal::kCountAtLeast, static_cast<unsigned>(n), 0.0}, sh);
            if (tid == 0) sh.topSize = 0;
            __syncthreads();
            if (nth.ok) {
                for (int i = tid; i < vocab; i += kThreads) {
                    u64 key;
                    keys.load(i, key);
                    if (key < nth.key) continue;
                    const int slot = atomicAdd(&sh.topSize, 1);
                    if (slot < kGpuMaxTopLogprobs) {
                        sh.topKeys[slot] = key;
                        sh.topRaw[slot] = x[i];
                    }
                }
            }
            __syncthreads();
            if (tid == 0) {  // at most 20: insertion sort, descending key
                const int size = min(sh.topSize, kGpuMaxTopLogprobs);
                for (int a = 1; a < size; ++a) {
                    const u64 key = sh.topKeys[a];
                    const float raw = sh.topRaw[a];
                    int b = a;
                    for (; b > 0 && sh.topKeys[b - 1] < key; --b) {
                        sh.topKeys[b] = sh.topKeys[b - 1];
                        sh.topRaw[b] = sh.topRaw[b - 1];
                    }
                    sh.topKeys[b] = key;
                    sh.topRaw[b] = raw;
                }
            }
            __syncthreads();
            topCount = min(min(sh.topSize, kGpuMaxTopLogprobs), n);
        }
    }

    // 2. Edits: repetition, frequency / presence, the min_tokens mask (the CPU's order).
    for (int e = tid; e < row.editCount; e += kThreads) {
        GpuSampleEdit& edit = edits[row.editBegin + e];
        float v = x[edit.token];
        edit.raw = v;
        if (edit.ops & kEditRepetition)
            v = v > 0.0f ? __fdiv_rn(v, row.repetitionPenalty) : __fmul_rn(v, row.repetitionPenalty);
        if (edit.ops & kEditSubtract) v = __fsub_rn(v, edit.delta);
        if (edit.ops & kEditMask) v = -INFINITY;
        x[edit.token] = v;
    }
    __syncthreads();

    // 3. Argmax of the edited row.
    ArgMax best{-INFINITY, INT_MAX};
    for (int i = tid; i < vocab; i += kThreads) {
        const float v = x[i];
        if (v > best.value) best = ArgMax{v, i};  // strict: each thread keeps its lowest index
    }
    best = blockArgMax(best, sh);

    // 4. The token.
    int token = best.index == INT_MAX ? 0 : best.index;
    if (!row.greedy) token = drawToken(x, probs, row, best, vocab, indexBits, indexMask, weightShift, sh);

    if (row.logprobs >= 0) {
        if (tid == 0) sh.chosenRaw = x[token];
        __syncthreads();
        for (int e = tid; e < row.editCount; e += kThreads) {
            const GpuSampleEdit& edit = edits[row.editBegin + e];
            if (edit.token == token) sh.chosenRaw = edit.raw;  // tokens are distinct: one writer
        }
        __syncthreads();
    }
    if (tid == 0) {
        GpuSampleOut& result = out[blockIdx.x];
        result.token = token;
        result.logprob = row.logprobs >= 0 ? logprobOf(sh.chosenRaw, logSumExp) : 0.0f;
        result.topCount = topCount;
        for (int k = 0; k < topCount; ++k) {
            result.topTokens[k] = static_cast<int32_t>(indexMask - (sh.topKeys[k] & indexMask));
            result.topLogprobs[k] = logprobOf(sh.topRaw[k], logSumExp);
        }
    }
}

} // namespace

void launch_gpu_sample(float* logits, uint32_t* scratch, const GpuSampleRow* rows, GpuSampleEdit* edits,
                       GpuSampleOut* out, int R, int V, int weightShift, cudaStream_t stream)
{
    if (R <= 0) return;
    gpu_sample_kernel<<<R, kThreads, 0, stream>>>(logits, scratch, rows, edits, out, V, weightShift);
    BROOK_CUDA_CHECK_LAUNCH();
}

} // namespace brook::cuda
