#include "engine/cpu/cpu_attention.h"

#include "engine/cpu/cpu_attention_bf16.h"
#include "engine/cpu/cpu_gemm_kernels.h"

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

// One sequence's K and V in bf16 pairs (attention_bf16.h), converted once a layer for all its
// queries. K: per (KV head, block) a pair tile of HD * blockSize / 2 words. V: per KV head, the
// pair rows of all its blocks in order (row r: slots 2r and 2r + 1, HD words), so that one call
// sums a query's whole history with its accumulators in registers (a call a block of 8 pair rows
// spent a quarter of its time loading and storing them).
struct PairedKv {
    uint32_t* words = nullptr;
    int numKvHeads = 0;
    int blocks = 0;
    int64_t tileWords = 0;
    uint32_t* k(int block, int kvHead) const { return words + (int64_t(kvHead) * blocks + block) * tileWords; }
    uint32_t* v(int kvHead) const { return words + (int64_t(numKvHeads) + kvHead) * blocks * tileWords; }
    static int64_t wordsFor(int numKvHeads, int blocks, int64_t tileWords)
    {
        return 2 * int64_t(numKvHeads) * blocks * tileWords;
    }
};

// Converts block b of a sequence whose slots 0..written-1 hold keys and values.
void pairBlock(const PagedKv& kv, std::span<const int32_t> blockTable, int written, int b, const PairedKv& paired)
{
    const int HD = kv.headDim, bs = kv.blockSize;
    const int64_t stride = int64_t(kv.numKvHeads) * HD;
    const int count = std::min(bs, written - b * bs);
    for (int g = 0; g < kv.numKvHeads; ++g) {
        attention_bf16::keyTilePairs(kv.kTile(blockTable[b], g), bs, count, HD, paired.k(b, g));
        attention_bf16::valueRowPairs(kv.vAt(blockTable[b], 0, g), stride, bs, count, HD,
                                      paired.v(g) + paired.tileWords * b);
    }
}

// attendGroups over a PairedKv: the same steps, the two products in vdpbf16ps. The query is
// rounded to pairs once; the probabilities after the fp32 exp (their sum, the denominator, stays
// fp32), with the slots past `position` of the last block set to 0.
void attendGroupsPaired(const float* q, float* out, int group, int kvHeads, int position, const PairedKv& paired,
                        int kvHead0, int HD, int bs, const CpuVectorOps& ops, float scale)
{
    const int keys = position + 1, heads = group * kvHeads, qPairs = HD / 2;
    const int blocks = (keys + bs - 1) / bs, padded = blocks * bs, pPairs = padded / 2;
    const auto rowsIn = [&](int b) { return std::min(bs, keys - b * bs); };
    thread_local std::vector<float> scores, denoms;  // [heads][padded], [heads]
    thread_local std::vector<uint32_t> qp, pp;       // [heads][qPairs], [heads][pPairs]
    scores.resize(size_t(heads) * size_t(padded));
    denoms.resize(size_t(heads));
    qp.resize(size_t(heads) * size_t(qPairs));
    pp.resize(size_t(heads) * size_t(pPairs));
    kernels::toBf16PairsAvx512Bf16(q, heads, HD, qp.data());  // heads' rows are consecutive
    for (int b = 0; b < blocks; ++b)
        for (int g = 0; g < kvHeads; ++g)
            attention_bf16::scoresPairs(&qp[size_t(g) * group * qPairs], group, qPairs, paired.k(b, kvHead0 + g), bs,
                                        rowsIn(b), qPairs, scale, &scores[size_t(g) * group * padded + size_t(b) * bs],
                                        padded);
    for (int h = 0; h < heads; ++h) {
        float* row = &scores[size_t(h) * padded];
        denoms[size_t(h)] = ops.expShifted(row, keys);
        std::fill(row + keys, row + padded, 0.0f);
        kernels::toBf16PairsAvx512Bf16(row, 1, padded, &pp[size_t(h) * pPairs]);
        std::fill(out + int64_t(h) * HD, out + int64_t(h + 1) * HD, 0.0f);
    }
    for (int g = 0; g < kvHeads; ++g)
        attention_bf16::weightedPairs(out + int64_t(g) * group * HD, group, HD, &pp[size_t(g) * group * pPairs], pPairs,
                                      paired.v(kvHead0 + g), (keys + 1) / 2, HD);
    for (int h = 0; h < heads; ++h) ops.scale(out + int64_t(h) * HD, 1.0f / denoms[size_t(h)], HD);
}

// Whether a sequence runs in pairs: PromptAttention::Bf16, more than one new token (a decode's
// conversion would read as much as its fp32 attention does), and shapes the kernels take.
bool pairsApply(PromptAttention mode, const PagedKv& kv, const AttentionSequence& seq)
{
    return mode == PromptAttention::Bf16 && seq.n > 1 && kv.headDim % 16 == 0 && kv.blockSize % 2 == 0;
}

}  // namespace

void pagedAttentionBatch(std::span<const AttentionSequence> sequences, int numHeads, const PagedKv& kv,
                         const CpuVectorOps& ops, CpuThreadPool* pool, PromptAttention prompts)
{
    assert(kv.keyLayout == PagedKv::KeyLayout::Tiles);  // the kernels read K tiles
    const int HD = kv.headDim, bs = kv.blockSize;
    const int group = numHeads / kv.numKvHeads;
    const float scale = 1.0f / std::sqrt(float(HD));

    // Sequences that run in bf16 pairs get their K and V converted first, all blocks of all of
    // them in one parallel loop (pairedFirst[s]: index of sequence s's first block in it).
    std::vector<PairedKv> paired(sequences.size());
    std::vector<int> pairedFirst(sequences.size() + 1, 0);
    const int64_t tileWords = int64_t(HD) * bs / 2;
    for (size_t s = 0; s < sequences.size(); ++s) {
        const AttentionSequence& seq = sequences[s];
        const int blocks = pairsApply(prompts, kv, seq) ? (seq.startPosition + seq.n + bs - 1) / bs : 0;
        pairedFirst[s + 1] = pairedFirst[s] + blocks;
    }
    if (pairedFirst.back() > 0) {
        thread_local std::vector<uint32_t> words;  // the caller's: workers only read and write their blocks
        words.resize(size_t(PairedKv::wordsFor(kv.numKvHeads, pairedFirst.back(), tileWords)));
        for (size_t s = 0; s < sequences.size(); ++s) {
            const int blocks = pairedFirst[s + 1] - pairedFirst[s];
            if (blocks > 0)
                paired[s] = {words.data() + PairedKv::wordsFor(kv.numKvHeads, pairedFirst[s], tileWords), kv.numKvHeads,
                             blocks, tileWords};
        }
        auto convert = [&](int item) {
            const size_t s =
                size_t(std::upper_bound(pairedFirst.begin(), pairedFirst.end(), item) - pairedFirst.begin()) - 1;
            const int b = item - pairedFirst[s];
            pairBlock(kv, sequences[s].blockTable, sequences[s].startPosition + sequences[s].n, b, paired[s]);
        };
        if (pool) {
            pool->run(pairedFirst.back(), convert);
        } else {
            for (int item = 0; item < pairedFirst.back(); ++item) convert(item);
        }
    }
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
        if (paired[s].words)
            attendGroupsPaired(q, out, group, groupsPerTask, seq.startPosition + i, paired[s], h / group, HD, bs, ops,
                               scale);
        else
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
                        CpuThreadPool* pool, PromptAttention prompts)
{
    const AttentionSequence one{q, out, n, startPosition, blockTable};
    pagedAttentionBatch(std::span(&one, 1), numHeads, kv, ops, pool, prompts);
}

}  // namespace brook::cpu
