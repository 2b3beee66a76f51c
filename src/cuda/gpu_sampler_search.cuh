// Device-side building blocks of the GPU sampling kernel (gpu_sampler_kernel.cu), CTAs of
// kThreads threads: block and warp reductions with fixed trees, the CTAs of one row's cluster
// (RowCluster), the contiguous index ranges the draw splits a row into, and the radix search
// (top-k, top-p, top-N logprobs) that finds, among keys walked in descending order, the first
// whose running (count, mass) meets a goal.
// The search takes 11-bit digits from the top. Each level is a histogram of (count, mass) in
// shared memory built with integer atomics (exact, so arrival order cannot change a result);
// once the chosen bucket holds <= kListCapacity keys they are gathered into shared memory and
// the remaining levels run there. Included by gpu_sampler_kernel.cu only.
#pragma once

#include "cuda/gpu_sampler_kernel.h"
#include "engine/sampler_math.h"

#include <climits>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#endif

namespace brook::cuda::gpusample {

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
    int bin;         // -1: no non-empty bin
    unsigned count;  // keys in the bin
    u64 mass;
    unsigned aboveCount;  // keys in the higher bins of this level
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
    u64 warpMass[kWarps];  // the draw: kept mass of each warp's index range (see warpRange)
    int warpLast[kWarps];  // the draw: highest kept index of each warp's range, -1 if none
    u64 drawBefore;        // the draw: kept mass of the ranges before the crossing warp's
    int drawWarp;          // the draw: the warp whose range holds the token, -1 if none
    int drawToken;
    Pick pick;
    u64 foundKey;
    int listSize;
    int chosenPos;
    int lowestPos;
    int topSize;
    float chosenRaw;
    u64 talk[2][3];  // RowCluster::publish's slots, read by the other CTAs of the row's cluster
};

// ---- block and warp primitives (fixed reduction trees) ----

struct SumOp {
    template <typename T>
    __device__ T operator()(T a, T b) const
    {
        return a + b;
    }
};
struct MaxOp {
    template <typename T>
    __device__ T operator()(T a, T b) const
    {
        return a > b ? a : b;
    }
};

template <typename T, typename Op>
__device__ T warpReduce(T value, Op op)
{
    for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_xor_sync(kFullMask, value, offset));
    return value;
}

template <typename T, typename Op>
__device__ T blockReduce(T value, Op op, T* scratch)
{
    value = warpReduce(value, op);
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

__device__ inline ArgMax better(ArgMax a, ArgMax b)
{
    if (b.value > a.value) return b;
    if (a.value > b.value) return a;
    return b.index < a.index ? b : a;  // equal values (never NaN here): the lower index
}

__device__ inline ArgMax blockArgMax(ArgMax best, Shared& sh)
{
    for (int offset = 16; offset > 0; offset /= 2) {
        const ArgMax other{__shfl_xor_sync(kFullMask, best.value, offset),
                           __shfl_xor_sync(kFullMask, best.index, offset)};
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

// Inclusive prefix sum over the lanes of a warp, in lane order.
__device__ inline u64 warpInclusiveSum(u64 value)
{
    const int lane = threadIdx.x & 31;
    for (int offset = 1; offset < 32; offset *= 2) {
        const u64 up = __shfl_up_sync(kFullMask, value, offset);
        if (lane >= offset) value += up;
    }
    return value;
}

// Part `part` of [begin, end) cut into `parts` contiguous pieces of ceil(size / parts) (the last
// ones shorter or empty). The draw walks a row in index order, so each warp owns one piece of
// the row and, inside the crossing warp's piece, each thread of the CTA one piece of that.
struct IndexRange {
    int begin;
    int end;
};

__device__ inline IndexRange splitRange(int begin, int end, int parts, int part)
{
    const int size = (end - begin + parts - 1) / parts;
    const int first = min(end, begin + part * size);
    return IndexRange{first, min(end, first + size)};
}

// The CTAs that sample one row together: `size` CTAs of consecutive blockIdx.x, launched as one
// thread-block cluster (sm_90) when size > 1. Each streams its share of the row through every
// pass and trades its reductions through distributed shared memory; all of them take the same
// decisions from the same combined values, in lockstep. size 1: an ordinary launch, where
// sync(), peer() and the cluster reductions do nothing.
struct RowCluster {
    int size;
    int rank;
    int round = 0;  // publish() calls so far (the same in every thread of the cluster)

    // A barrier of every thread of the cluster, with release / acquire ordering at cluster scope:
    // global writes before it (the lead's edits of the row) are seen by every CTA after it. The
    // probabilities need none: each CTA reads back only its own share.
    __device__ void sync() const
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (size > 1) cooperative_groups::this_cluster().sync();
#endif
    }
    // `local` (a field of this CTA's shared memory) as CTA r of the cluster holds it.
    template <typename T>
    __device__ T peer(const T& local, int r) const
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (size > 1) return *cooperative_groups::this_cluster().map_shared_rank(&local, r);
#endif
        return local;
    }
    // This CTA's part of a row of `vocab` tokens: whole multiples of 32 tokens (128-byte lines of
    // the probabilities), so no line is written by two CTAs. size 1: the whole row.
    __device__ IndexRange share(int vocab) const
    {
        const int piece = ((vocab + size - 1) / size + 31) / 32 * 32;
        const int first = min(vocab, rank * piece);
        return IndexRange{first, min(vocab, first + piece)};
    }
    // Publishes this CTA's (a, b, c) and waits for the cluster; peer(slot[i], r) then reads CTA r's.
    // Slots alternate between two buffers: a CTA writes exchange k + 2's values only after the
    // barrier of exchange k + 1, which every peer reaches after reading exchange k's.
    __device__ const u64* publish(Shared& sh, u64 a, u64 b = 0, u64 c = 0)
    {
        u64* slot = sh.talk[round++ & 1];
        if (threadIdx.x == 0) {
            slot[0] = a;
            slot[1] = b;
            slot[2] = c;
        }
        sync();
        return slot;
    }
};

// Sum and max of one value per CTA over the cluster (the value itself for one CTA).
__device__ inline u64 clusterSum(RowCluster& cluster, Shared& sh, u64 value)
{
    if (cluster.size == 1) return value;
    const u64* slot = cluster.publish(sh, value);
    u64 total = 0;
    for (int r = 0; r < cluster.size; ++r) total += cluster.peer(slot[0], r);
    return total;
}

__device__ inline u64 clusterMax(RowCluster& cluster, Shared& sh, u64 value)
{
    if (cluster.size == 1) return value;
    const u64* slot = cluster.publish(sh, value);
    u64 best = 0;
    for (int r = 0; r < cluster.size; ++r) {
        const u64 v = cluster.peer(slot[0], r);
        best = v > best ? v : best;
    }
    return best;
}

// This thread's warp's piece of a row of `vocab` tokens; lanes stride by 32 inside it.
__device__ inline IndexRange warpRange(int vocab)
{
    return splitRange(0, vocab, kWarps, static_cast<int>(threadIdx.x / 32));
}

// Exclusive prefix sums over threads (in thread order) of a (count, mass) pair.
__device__ inline void blockExclusiveScan(unsigned& count, u64& mass, Shared& sh)
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
    enum Mode { kCountAtLeast, kMassAtLeast };
    Mode mode;
    unsigned count;
    double mass;

    __device__ bool met(unsigned c, u64 m) const
    {
        if (mode == kCountAtLeast) return c >= count;
        return static_cast<double>(m) >= mass;  // correctly rounded, as on the CPU
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
// the lowest non-empty bin. Bins [0, bins) of sh.binCount / sh.binMass, summed over the cluster's
// CTAs (after a cluster barrier; every CTA then picks the same bin).
__device__ inline Pick chooseBin(int bins, unsigned beforeCount, u64 beforeMass, const Goal& goal,
                                 const RowCluster& cluster, Shared& sh)
{
    const int tid = threadIdx.x;
    unsigned c[kBinsPerThread];
    u64 m[kBinsPerThread];
    unsigned sumC = 0;
    u64 sumM = 0;
#pragma unroll
    for (int k = 0; k < kBinsPerThread; ++k) {
        const int pos = tid * kBinsPerThread + k;  // position in descending bin order
        c[k] = 0u;
        m[k] = 0ull;
        for (int r = 0; pos < bins && r < cluster.size; ++r) {
            c[k] += cluster.peer(sh.binCount[bins - 1 - pos], r);
            m[k] += cluster.peer(sh.binMass[bins - 1 - pos], r);
        }
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
// Over a cluster, each CTA tallies (and gathers) the keys of its share, and the levels pick their
// bins from the summed histograms.
template <class Keys>
__device__ Found radixSearch(const Keys& keys, u64 floor, const Goal& goal, RowCluster& cluster, Shared& sh)
{
    const int tid = threadIdx.x;
    const IndexRange share = cluster.share(keys.vocab);
    const bool withMass = Keys::kHasMass && goal.mode != Goal::kCountAtLeast;  // 64-bit atomics only if needed
    u64 prefix = 0;                                                            // the digits chosen so far
    int shift = keys.keyBits();                                                // bits below the prefix
    unsigned beforeCount = 0;                                                  // keys above the current bucket
    u64 beforeMass = 0;
    bool inList = false;
    while (shift > 0) {
        const int width = shift < kDigitBits ? shift : kDigitBits;
        const int above = shift;  // bits >= `above` are the prefix
        shift -= width;
        const int bins = 1 << width;
        cluster.sync();  // no peer still reads these bins (the level or search before)
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
            for (int i = share.begin + tid; i < share.end; i += kThreads) {
                u64 key;
                if (keys.load(i, key) && key >= floor) tally(key);
            }
        }
        __syncthreads();
        cluster.sync();  // every CTA's histogram is complete
        const Pick pick = chooseBin(bins, beforeCount, beforeMass, goal, cluster, sh);
        if (pick.bin < 0) return Found{floor, beforeCount, beforeMass, false};
        beforeCount += pick.aboveCount;
        beforeMass += pick.aboveMass;
        prefix = (prefix << width) | static_cast<u64>(pick.bin);
        if (shift == 0) return Found{prefix, beforeCount + pick.count, beforeMass + pick.mass, true};
        if (!inList && pick.count <= kListCapacity) {
            if (tid == 0) sh.listSize = 0;
            __syncthreads();
            for (int i = share.begin + tid; i < share.end; i += kThreads) {
                u64 key;
                if (keys.load(i, key) && key >= floor && (key >> shift) == prefix) {
                    const int slot = atomicAdd(&sh.listSize, 1);
                    if (slot < kListCapacity) sh.list[slot] = key;
                }
            }
            __syncthreads();
            inList = true;
        }
        if (inList && pick.count == 1) {  // one CTA's list holds it; valid keys are > 0
            if (tid == 0) sh.foundKey = 0;
            __syncthreads();
            const int size = min(sh.listSize, kListCapacity);
            for (int e = tid; e < size; e += kThreads)
                if ((sh.list[e] >> shift) == prefix) sh.foundKey = sh.list[e];
            __syncthreads();
            const u64 key = clusterMax(cluster, sh, sh.foundKey);
            __syncthreads();
            return Found{key, beforeCount + 1, beforeMass + pick.mass, true};
        }
    }
    return Found{floor, beforeCount, beforeMass, false};  // not reached: keyBits > 0
}

}  // namespace brook::cuda::gpusample
