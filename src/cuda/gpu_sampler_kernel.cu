// The GPU sampling kernel: one CTA of 1024 threads per row (or a cluster of them, below),
// reproducing Sampler::sample bit for bit (engine/sampler.cpp's header comment is the
// definition; engine/sampler_math.h the math):
//   1. logprobs, if asked, from the raw row: per-thread online max / sum of exps, combined in
//      double; the top-N by a radix search on (ordered raw bits, reversed index) keys.
//   2. edits (penalties, min_tokens mask) in place, each saving the raw logit it overwrote.
//   3. argmax, lowest index on ties: the token of greedy rows, the max of sampled ones.
//   4. sampled rows: every token's probability bits p into scratch, with exact integer weights;
//      top-k and top-p are radix searches (gpu_sampler_search.cuh) over 64-bit keys (p bits,
//      reversed index); min-p is a threshold on the key. The draw walks the kept tokens in index
//      order: warp w owns the contiguous range warpRange (lanes stride by 32 inside it, so loads
//      coalesce), the passes that tally kept masses tally them per warp, a scan over the 32 warp
//      masses finds the warp holding the token, a block scan over 1024 contiguous thread pieces
//      of its range the thread, and that thread walks its piece (a few tokens). No pass over the
//      row beyond the filters' own, plus one when top-p sets the last floor.
// No floating-point atomics; every float reduction has a fixed tree; masses are exact u64 sums;
// a row's result depends on that row alone.
// Few rows leave most SMs idle while one CTA a row walks ~100,000 tokens pass after pass (ERNIE's
// vocabulary), so then several CTAs sample a row (RowCluster, sm_90 thread-block clusters): each
// CTA takes its contiguous share of the row through every pass, as the one CTA takes the whole
// row. Histograms, counts and masses are summed over the cluster through distributed shared
// memory (exact integers), the argmax combined in rank order (ties go to the lowest index), and
// every CTA takes the same decisions from the same sums. The draw sees the row as the shares'
// warp ranges in index order: the share holding the crossing is found from the shares' masses,
// and only its CTA walks. Only batches that leave SMs idle are clustered (gpu_sample_cluster_size:
// up to 66 rows on 132 SMs).
#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/gpu_sampler_kernel.h"
#include "cuda/gpu_sampler_search.cuh"
#include "cuda/pdl.cuh"

#include <algorithm>

namespace brook::cuda {

namespace {

using namespace gpusample;

constexpr int kBatch = 8;  // row elements each thread loads at once in the streaming passes

// Publishes each warp's kept mass and highest kept index (this thread's shares of its warp's
// range) to sh.warpMass / sh.warpLast for the draw. The caller's next barrier makes them visible.
__device__ void publishWarpMass(u64 mass, int last, Shared& sh)
{
    mass = warpReduce(mass, SumOp{});
    last = warpReduce(last, MaxOp{});
    if ((threadIdx.x & 31) == 0) {
        sh.warpMass[threadIdx.x / 32] = mass;
        sh.warpLast[threadIdx.x / 32] = last;
    }
}

// Total weight of the candidates with key >= floor over the row (the cluster), walked by the
// warp ranges of this CTA's share so that the per-warp masses the draw needs come with it.
__device__ u64 keptMass(const ProbKeys& keys, u64 floor, RowCluster& cluster, Shared& sh)
{
    const IndexRange share = cluster.share(keys.vocab);
    const IndexRange range = splitRange(share.begin, share.end, kWarps, static_cast<int>(threadIdx.x / 32));
    u64 part = 0;
    int last = -1;
    for (int i = range.begin + static_cast<int>(threadIdx.x & 31); i < range.end; i += 32) {
        u64 key;
        if (keys.load(i, key) && key >= floor) {
            part += keys.weight(key);
            last = i;
        }
    }
    publishWarpMass(part, last, sh);
    const u64 mass = blockReduce(part, SumOp{}, sh.reduceU64);  // its barriers publish the warp masses
    return clusterSum(cluster, sh, mass);
}

// The first kept token (key >= floor) in index order whose running mass C has
// double(C) > target; the highest kept index if none. sh.warpMass / warpLast hold the kept
// masses of this floor over the warp ranges of this CTA's share. The shares' masses give the mass
// before each share and so the share holding the crossing; in that CTA a scan of the 32 warp sums
// picks the warp, then every thread sums a contiguous piece of that warp's range (a few tokens),
// a block scan picks the piece, and its thread walks it. The token is then shared over the cluster.
__device__ int drawInIndexOrder(const ProbKeys& keys, u64 floor, double target, RowCluster& cluster, Shared& sh)
{
    const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x / 32);
    u64 before = 0;  // kept mass of the shares before this CTA's
    int lastKept = -1;
    if (cluster.size > 1) {
        const u64 shareMass = warpReduce(sh.warpMass[lane], SumOp{});  // every warp computes it
        const int shareLast = warpReduce(sh.warpLast[lane], MaxOp{});
        const u64* slot = cluster.publish(sh, shareMass, static_cast<u64>(shareLast + 1));
        for (int r = 0; r < cluster.size; ++r) {
            if (r < cluster.rank) before += cluster.peer(slot[0], r);
            lastKept = max(lastKept, static_cast<int>(cluster.peer(slot[1], r)) - 1);
        }
    }
    // Only the share where C crosses the target draws: C before it has not crossed yet.
    const bool drawsHere = !(static_cast<double>(before) > target);
    if (warp == 0) {
        const u64 own = sh.warpMass[lane];
        const u64 through = before + warpInclusiveSum(own);  // C at the end of warp `lane`'s range
        // C only grows, so the lanes that cross are a suffix: the first holds the token.
        const unsigned crossing = drawsHere ? __ballot_sync(kFullMask, static_cast<double>(through) > target) : 0u;
        const int chosen = crossing ? __ffs(static_cast<int>(crossing)) - 1 : -1;
        const int last = warpReduce(sh.warpLast[lane], MaxOp{});
        if (lane == 0) {
            sh.drawWarp = chosen;
            sh.drawToken = cluster.size > 1 ? -1 : last;  // one CTA: rounding ran past the end, unless found below
        }
        if (lane == chosen) sh.drawBefore = through - own;
    }
    __syncthreads();
    const int chosenWarp = sh.drawWarp;  // uniform: the whole CTA searches that warp's range
    if (chosenWarp >= 0) {
        const IndexRange share = cluster.share(keys.vocab);
        const IndexRange range = splitRange(share.begin, share.end, kWarps, chosenWarp);
        const IndexRange piece = splitRange(range.begin, range.end, kThreads, static_cast<int>(threadIdx.x));
        u64 own = 0;
        for (int i = piece.begin; i < piece.end; ++i) {
            u64 key;
            if (keys.load(i, key) && key >= floor) own += keys.weight(key);
        }
        unsigned unusedCount = 0;
        u64 pieceBefore = own;
        blockExclusiveScan(unusedCount, pieceBefore, sh);
        pieceBefore += sh.drawBefore;  // C just before this thread's piece
        // C only grows over the pieces, so the crossing threads are a suffix: the first holds the
        // token (the pieces' masses add up to the warp's, so one crosses).
        if (static_cast<double>(pieceBefore + own) > target && !(static_cast<double>(pieceBefore) > target)) {
            u64 cumulative = pieceBefore;
            for (int i = piece.begin; i < piece.end; ++i) {
                u64 key;
                if (!keys.load(i, key) || key < floor) continue;
                cumulative += keys.weight(key);
                if (static_cast<double>(cumulative) > target) {
                    sh.drawToken = i;
                    break;
                }
            }
        }
    }
    __syncthreads();
    if (cluster.size == 1) return sh.drawToken;
    // One CTA drew (indices + 1 > 0), or none did: rounding ran past the end of the row.
    const int drawn = static_cast<int>(clusterMax(cluster, sh, static_cast<u64>(sh.drawToken + 1))) - 1;
    return drawn >= 0 ? drawn : lastKept;
}

// The draw of a sampled row (engine/sampler.cpp drawToken); `best` is the edited row's argmax.
// Every CTA of the cluster runs it over its share and returns the same token.
__device__ int drawToken(const float* x, uint32_t* probs, const GpuSampleRow& row, ArgMax best, int vocab,
                         int indexBits, u64 indexMask, int weightShift, RowCluster& cluster, Shared& sh)
{
    const int argmaxToken = best.index == INT_MAX ? 0 : best.index;
    if (!isfinite(best.value)) return argmaxToken;  // all masked, or +inf present
    const float temperature = row.temperature;
    const float maxScaled = __fdiv_rn(best.value, temperature);
    if (!isfinite(maxScaled)) return argmaxToken;  // temperature so small it overflows

    const uint32_t minBits = kOneBits - (static_cast<uint32_t>(weightShift) << 23);  // weight >= 1
    // Below e^cut = 2^-(shift + 1) a token has no weight and its bits are never read: skip the
    // exp (most of a real model's vocabulary). 0 is what the CPU's bits amount to there.
    const float cut = -0.6931472f * static_cast<float>(weightShift + 1);
    const IndexRange share = cluster.share(vocab);  // the whole row for one CTA: warpRange(vocab)
    const IndexRange range = splitRange(share.begin, share.end, kWarps, static_cast<int>(threadIdx.x / 32));
    unsigned count = 0;
    u64 mass = 0, maxKey = 0;
    int last = -1;
    const bool needMaxKey = row.minP > 0.0f;  // only min-p reads the top key
    // kBatch loads issued before any store: the stores to probs would otherwise keep the
    // compiler from overlapping one iteration's load with the next (a row is ~100 per lane).
    for (int base = range.begin + static_cast<int>(threadIdx.x & 31); base < range.end; base += 32 * kBatch) {
        float v[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int i = base + u * 32;
            v[u] = i < range.end ? x[i] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int i = base + u * 32;
            if (i >= range.end) break;
            const float d = __fsub_rn(__fdiv_rn(v[u], temperature), maxScaled);
            const uint32_t bits = d < cut ? 0u : samplerProbBits(d);
            probs[i] = bits;
            if (bits >= minBits) {
                ++count;
                mass += samplerWeight(bits, weightShift);
                if (needMaxKey) {
                    const u64 key = (static_cast<u64>(bits) << indexBits) | (indexMask - static_cast<u64>(i));
                    maxKey = key > maxKey ? key : maxKey;
                }
                last = i;
            }
        }
    }
    publishWarpMass(mass, last, sh);                    // the kept masses while floor is 0
    count = blockReduce(count, SumOp{}, sh.reduceU32);  // its barriers also publish probs
    mass = blockReduce(mass, SumOp{}, sh.reduceU64);
    if (needMaxKey) maxKey = blockReduce(maxKey, MaxOp{}, sh.reduceU64);
    if (cluster.size > 1) {
        const u64* slot = cluster.publish(sh, count, mass, maxKey);
        count = 0;
        mass = 0;
        maxKey = 0;
        for (int r = 0; r < cluster.size; ++r) {
            count += static_cast<unsigned>(cluster.peer(slot[0], r));
            mass += cluster.peer(slot[1], r);
            const u64 key = cluster.peer(slot[2], r);
            maxKey = key > maxKey ? key : maxKey;
        }
    }
    if (count == 0) return argmaxToken;

    const ProbKeys keys{probs, vocab, indexBits, indexMask, minBits, weightShift};
    u64 floor = 0;                // the kept set is always {key >= floor}; candidates' keys are > 0
    bool warpMassesFresh = true;  // sh.warpMass holds the kept masses of `floor`
    if (row.topK > 0 && static_cast<unsigned>(row.topK) < count) {
        const Found found =
            radixSearch(keys, 0, Goal{Goal::kCountAtLeast, static_cast<unsigned>(row.topK), 0.0}, cluster, sh);
        if (!found.ok) return argmaxToken;
        floor = found.key;
        mass = keptMass(keys, floor, cluster, sh);
    }
    if (row.topP < 1.0f) {
        const float topP = row.topP < 0.0f ? 0.0f : row.topP;
        const double goal = static_cast<double>(topP) * static_cast<double>(mass);
        const Found found = radixSearch(keys, floor, Goal{Goal::kMassAtLeast, 0u, goal}, cluster, sh);
        if (!found.ok) return argmaxToken;
        floor = found.key;
        mass = found.mass;
        warpMassesFresh = false;
    }
    if (row.minP > 0.0f) {
        // p >= min_p (p_max = 1) exactly when the key is >= bits(min_p) << indexBits.
        const u64 threshold = static_cast<u64>(floatBits(row.minP)) << indexBits;
        const u64 minPFloor = threshold < maxKey ? threshold : maxKey;  // the top token always stays
        floor = minPFloor > floor ? minPFloor : floor;
        mass = keptMass(keys, floor, cluster, sh);
        warpMassesFresh = true;
    }
    if (!warpMassesFresh) keptMass(keys, floor, cluster, sh);  // top-p's total is exact: only the split is new
    return drawInIndexOrder(keys, floor, row.u * static_cast<double>(mass), cluster, sh);
}

__device__ float logprobOf(float raw, double logSumExp)
{
    if (isnan(raw) || !isfinite(logSumExp)) return -INFINITY;
    return static_cast<float>(static_cast<double>(raw) - logSumExp);
}

// Grid: rows x clusterSize CTAs, a row's CTAs consecutive (one cluster when clusterSize > 1).
__global__ void __launch_bounds__(kThreads)
    gpu_sample_kernel(float* __restrict__ logits, uint32_t* __restrict__ scratch, const GpuSampleRow* __restrict__ rows,
                      GpuSampleEdit* __restrict__ edits, GpuSampleOut* __restrict__ out, int vocab, int weightShift,
                      int clusterSize)
{
    __shared__ Shared sh;
    const int tid = threadIdx.x;
    RowCluster cluster{clusterSize, static_cast<int>(blockIdx.x) % clusterSize};
    const bool lead = cluster.rank == 0;  // logprobs, edits and the result
    const int rowIndex = static_cast<int>(blockIdx.x) / clusterSize;
    const GpuSampleRow row = rows[rowIndex];
    float* x = logits + static_cast<size_t>(rowIndex) * vocab;  // [V]
    uint32_t* probs = scratch + static_cast<size_t>(rowIndex) * vocab;
    int indexBits = 1;
    while ((1ll << indexBits) < vocab) ++indexBits;  // indices fit in indexBits bits
    const u64 indexMask = (1ull << indexBits) - 1;

    // 1. Logprobs of the raw logits: log-sum-exp, then the top-N.
    double logSumExp = -INFINITY;
    int topCount = 0;
    if (row.logprobs >= 0 && lead) {
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
            const double part = localMax > -INFINITY
                                    ? static_cast<double>(localSum) * exp(static_cast<double>(localMax) - rowMax)
                                    : 0.0;
            logSumExp = rowMax + log(blockReduce(part, SumOp{}, sh.reduceF64));
        }
        const int n = min(row.logprobs, min(vocab, kGpuMaxTopLogprobs));
        if (n > 0) {
            const RawKeys keys{x, vocab, indexBits, indexMask};
            RowCluster alone{1, 0};  // the lead's CTA by itself
            const Found nth = radixSearch(keys, 0, Goal{Goal::kCountAtLeast, static_cast<unsigned>(n), 0.0}, alone, sh);
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
    for (int e = tid; lead && e < row.editCount; e += kThreads) {
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
    if (row.editCount > 0) cluster.sync();  // the edited row, for every CTA of the cluster

    // 3. Argmax of the edited row (of this CTA's share, then over the cluster in rank order).
    const IndexRange share = cluster.share(vocab);
    ArgMax best{-INFINITY, INT_MAX};
    for (int base = share.begin + tid; base < share.end; base += kThreads * kBatch) {  // kBatch loads in flight
        float v[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int i = base + u * kThreads;
            v[u] = i < share.end ? x[i] : -INFINITY;
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u)
            if (v[u] > best.value)
                best = ArgMax{v[u], base + u * kThreads};  // strict: each thread keeps its lowest index
    }
    best = blockArgMax(best, sh);
    if (cluster.size > 1) {
        const u64* slot =
            cluster.publish(sh, static_cast<u64>(__float_as_uint(best.value)), static_cast<u64>(best.index));
        best = ArgMax{-INFINITY, INT_MAX};
        for (int r = 0; r < cluster.size; ++r)
            best = better(best, ArgMax{__uint_as_float(static_cast<uint32_t>(cluster.peer(slot[0], r))),
                                       static_cast<int>(cluster.peer(slot[1], r))});
    }

    // 4. The token.
    int token = best.index == INT_MAX ? 0 : best.index;
    if (!row.greedy) token = drawToken(x, probs, row, best, vocab, indexBits, indexMask, weightShift, cluster, sh);

    if (row.logprobs >= 0 && lead) {
        if (tid == 0) sh.chosenRaw = x[token];
        __syncthreads();
        for (int e = tid; e < row.editCount; e += kThreads) {
            const GpuSampleEdit& edit = edits[row.editBegin + e];
            if (edit.token == token) sh.chosenRaw = edit.raw;  // tokens are distinct: one writer
        }
        __syncthreads();
    }
    if (tid == 0 && lead) {
        GpuSampleOut& result = out[rowIndex];
        result.token = token;
        result.logprob = row.logprobs >= 0 ? logprobOf(sh.chosenRaw, logSumExp) : 0.0f;
        result.topCount = topCount;
        for (int k = 0; k < topCount; ++k) {
            result.topTokens[k] = static_cast<int32_t>(indexMask - (sh.topKeys[k] & indexMask));
            result.topLogprobs[k] = logprobOf(sh.topRaw[k], logSumExp);
        }
    }
    cluster.sync();  // no CTA leaves while a peer may still read its shared memory
}

constexpr int kMaxCluster = 8;  // portable cluster size

}  // namespace

// The largest cluster whose grid stays in one wave. A CTA fills an SM (1,024 threads of 64
// registers), and a cluster's CTAs must share one GPC, so clusters of 4 or 8 stop fitting well
// before the grid has a CTA per SM. Measured on an H200 (132 SMs; sampler_bench, 2026-12-03, us a
// call at top-p 0.95 for 1 / 4 CTAs a row): 16 rows x 4 106 (one CTA a row: 225), x 8 158;
// 32 rows x 2 148 (239), x 4 174; 64 rows x 2 155 (243). Hence 8 or 4 CTAs while the grid is
// within half the SMs, 2 while within all of them.
int gpu_sample_cluster_size(int R)
{
    if (R <= 0 || !threadBlockClustersSupported()) return 1;
    if (const int forced = samplerClusterOverride(); forced > 0) return std::min(forced, kMaxCluster);
    const int sms = multiprocessorCount();
    for (const int size : {8, 4})
        if (R * size <= sms / 2) return size;
    return R * 2 <= sms ? 2 : 1;
}

void launch_gpu_sample(float* logits, uint32_t* scratch, const GpuSampleRow* rows, GpuSampleEdit* edits,
                       GpuSampleOut* out, int R, int V, int weightShift, cudaStream_t stream)
{
    if (R <= 0) return;
    const int cluster = gpu_sample_cluster_size(R);
    launchDependentIf(false, dim3(unsigned(cluster), 1, 1), gpu_sample_kernel, dim3(unsigned(R) * unsigned(cluster)),
                      dim3(kThreads), 0, stream, logits, scratch, rows, edits, out, V, weightShift, cluster);
}

}  // namespace brook::cuda
