#include "engine/cpu/cpu_attention.h"


#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

namespace brook::cpu {

namespace {

// Asks for `rows` cache rows of HD floats (stride floats apart) ahead of their use.
void prefetchRows(const float* rows, int64_t stride, int count, int HD)
{
    constexpr int kLineFloats = 16;  // 64-byte lines
    for (int r = 0; r < count; ++r)
        for (int d = 0; d < HD; d += kLineFloats) __builtin_prefetch(rows + r * stride + d, 0, 3);
}

// The same for `floats` contiguous floats (K tiles: a block's KV heads lie one after the other).
void prefetchFloats(const float* p, int64_t floats)
{
    for (int64_t i = 0; i < floats; i += 16) __builtin_prefetch(p + i, 0, 3);
}

// One query's GQA groups: `group` consecutive query heads share the K / V of one KV head, and
// this takes `kvHeads` consecutive KV heads from kvHead0 (q and out [kvHeads * group, HD]), over
// keys 0..position. Block by block for all the heads: a block's K tile scores all `group` heads
// in one pass (cpu_attention_tiles.h), its V rows are read once for four heads, and the next
// block is prefetched while this one is computed (`prefetch`). The rows of a decode step are cold
// (a step streams ~700 MB of weights past them); with every KV head of a slot in one task a core
// reads whole K tiles and V slots (contiguous lines). A prompt's queries share their K / V, which
// the first ones bring into cache; for them the prefetches only took load slots from the FMAs
// (128 new over 1,000 cached: 3-11% slower with them, docs/benchmarks.md).
void attendGroups(const float* q, float* out, int group, int kvHeads, int position, std::span<const int32_t> blockTable,
                  int kvHead0, const PagedKv& kv, const CpuVectorOps& ops, float scale, bool prefetch)
{
    const int HD = kv.headDim, bs = kv.blockSize, keys = position + 1, heads = group * kvHeads;
    const int64_t stride = int64_t(kv.numKvHeads) * HD;  // floats from one slot's V row to the next
    const int64_t tileFloats = int64_t(HD) * bs * kvHeads;
    const int blocks = (keys + bs - 1) / bs;
    const auto rowsIn = [&](int b) { return std::min(bs, keys - b * bs); };
    thread_local std::vector<float> scores, denoms;  // [heads][keys], [heads]
    scores.resize(size_t(heads) * size_t(keys));
    denoms.resize(size_t(heads));
    for (int b = 0; b < blocks; ++b) {
        if (prefetch && b + 1 < blocks) prefetchFloats(kv.kTile(blockTable[b + 1], kvHead0), tileFloats);
        for (int g = 0; g < kvHeads; ++g)
            ops.scoresTile(q + int64_t(g) * group * HD, group, HD, kv.kTile(blockTable[b], kvHead0 + g), bs, rowsIn(b),
                           HD, scale, &scores[size_t(g) * group * keys + size_t(b) * bs], keys);
    }
    if (prefetch) prefetchRows(kv.vAt(blockTable[0], 0, kvHead0), stride, rowsIn(0), HD * kvHeads);
    for (int h = 0; h < heads; ++h) {
        denoms[size_t(h)] = ops.expShifted(&scores[size_t(h) * keys], keys);
        std::fill(out + int64_t(h) * HD, out + int64_t(h + 1) * HD, 0.0f);
    }
    for (int b = 0; b < blocks; ++b) {
        if (prefetch && b + 1 < blocks)
            prefetchRows(kv.vAt(blockTable[b + 1], 0, kvHead0), stride, rowsIn(b + 1), HD * kvHeads);
        for (int g = 0; g < kvHeads; ++g)
            ops.weightedRows(out + int64_t(g) * group * HD, group, HD,
                             &scores[size_t(g) * group * keys + size_t(b) * bs], keys,
                             kv.vAt(blockTable[b], 0, kvHead0 + g), stride, rowsIn(b), HD);
    }
    for (int h = 0; h < heads; ++h) ops.scale(out + int64_t(h) * HD, 1.0f / denoms[size_t(h)], HD);
}

}  // namespace

void pagedAttentionBatch(std::span<const AttentionSequence> sequences, int numHeads, const PagedKv& kv,
                         const CpuVectorOps& ops, CpuThreadPool* pool)
{
    assert(kv.keyLayout == PagedKv::KeyLayout::Tiles);  // the kernels read K tiles
    const int HD = kv.headDim;
    const int group = numHeads / kv.numKvHeads;
    const float scale = 1.0f / std::sqrt(float(HD));

    // firstItem[s]: index of sequence s's first (query, head) item; cost ~ keys read in all.
    std::vector<int> firstItem(sequences.size() + 1, 0);
    int64_t cost = 0;
    for (size_t s = 0; s < sequences.size(); ++s) {
        firstItem[s + 1] = firstItem[s] + sequences[s].n * numHeads;
        cost += int64_t(sequences[s].n) * numHeads * (sequences[s].startPosition + sequences[s].n);
    }
    // A task is one query's GQA groups (items are head-fastest, so `groupsPerTask * group`
    // consecutive items): one core reads each group's K / V rows from memory once (at 4 heads a
    // task both cores fetched them). With queries enough to keep every core busy, all of a
    // query's groups (whole cache slots, see attendGroups); a single decode keeps a task a group,
    // so that its two groups still run on two cores.
    const int queries = firstItem.back() / numHeads;
    const int threads = pool ? pool->threads() : 1;
    const int groupsPerTask = queries >= 2 * threads ? kv.numKvHeads : 1;
    const int tasks = firstItem.back() / (group * groupsPerTask);
    auto attend = [&](int task) {
        const int item = task * group * groupsPerTask;
        const size_t s = size_t(std::upper_bound(firstItem.begin(), firstItem.end(), item) - firstItem.begin()) - 1;
        const AttentionSequence& seq = sequences[s];
        const int local = item - firstItem[s];
        const int i = local / numHeads, h = local % numHeads;
        const float* q = seq.q + (int64_t(i) * numHeads + h) * HD;
        float* out = seq.out + (int64_t(i) * numHeads + h) * HD;
        attendGroups(q, out, group, groupsPerTask, seq.startPosition + i, seq.blockTable, h / group, kv, ops, scale,
                     seq.n == 1);
    };
    // ~1,000 (query, head, key) triples are ~10 us: below that the pool's hand-off costs more than
    // it saves. (At 4,096 a decode step's attention ran on the caller alone, the other core
    // spinning, up to a context of 256.)
    if (!pool || cost <= 1024) {
        for (int task = 0; task < tasks; ++task) attend(task);
        return;
    }
    pool->run(tasks, attend);
}

void pagedAttentionFast(const float* q, float* out, int n, int numHeads, int startPosition,
                        std::span<const int32_t> blockTable, const PagedKv& kv, const CpuVectorOps& ops,
                        CpuThreadPool* pool)
{
    const AttentionSequence one{q, out, n, startPosition, blockTable};
    pagedAttentionBatch(std::span(&one, 1), numHeads, kv, ops, pool);
}

}  // namespace brook::cpu
