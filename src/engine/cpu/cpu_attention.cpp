#include "engine/cpu/cpu_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace brook::cpu {

namespace {

void attendOne(const float* qh, float* oh, int position, std::span<const int32_t> blockTable, int kvHead,
               const PagedKv& kv, const CpuVectorOps& ops, float scale)
{
    const int HD = kv.headDim, bs = kv.blockSize;
    const int64_t stride = int64_t(kv.numKvHeads) * HD;  // floats from one slot's row to the next
    thread_local std::vector<float> scores;
    scores.resize(size_t(position) + 1);
    // Keys 0..position, one cache block (bs consecutive slots) per call.
    for (int j0 = 0; j0 <= position; j0 += bs) {
        const int count = std::min(bs, position + 1 - j0);
        ops.dotRows(qh, kv.kAt(blockTable[j0 / bs], 0, kvHead), stride, count, HD, scale, &scores[size_t(j0)]);
    }
    float maxScore = -INFINITY;
    for (int j = 0; j <= position; ++j) maxScore = std::max(maxScore, scores[j]);
    for (int j = 0; j <= position; ++j) scores[j] -= maxScore;
    ops.exp(scores.data(), scores.data(), position + 1);
    float denom = 0.0f;
    for (int j = 0; j <= position; ++j) denom += scores[j];
    std::fill(oh, oh + HD, 0.0f);
    for (int j0 = 0; j0 <= position; j0 += bs) {
        const int count = std::min(bs, position + 1 - j0);
        ops.axpyRows(oh, &scores[size_t(j0)], kv.vAt(blockTable[j0 / bs], 0, kvHead), stride, count, HD);
    }
    ops.scale(oh, 1.0f / denom, HD);
}

}  // namespace

void pagedAttentionBatch(std::span<const AttentionSequence> sequences, int numHeads, const PagedKv& kv,
                         const CpuVectorOps& ops, CpuThreadPool* pool)
{
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
    const int work = firstItem.back();
    auto attend = [&](int item) {
        const size_t s = size_t(std::upper_bound(firstItem.begin(), firstItem.end(), item) - firstItem.begin()) - 1;
        const AttentionSequence& seq = sequences[s];
        const int local = item - firstItem[s];
        const int i = local / numHeads, h = local % numHeads;
        attendOne(seq.q + (int64_t(i) * numHeads + h) * HD, seq.out + (int64_t(i) * numHeads + h) * HD,
                  seq.startPosition + i, seq.blockTable, h / group, kv, ops, scale);
    };
    // ~1,000 (query, head, key) triples are ~10 us: below that the pool's hand-off costs more than
    // it saves. (At 4,096 a decode step's attention ran on the caller alone, the other core
    // spinning, up to a context of 256.)
    if (!pool || cost <= 1024) {
        for (int item = 0; item < work; ++item) attend(item);
        return;
    }
    // A grab is one query's whole GQA group (the heads that read the same K / V rows; items are
    // head-fastest, so a group is `group` consecutive items): its first head brings the rows in
    // from memory and the others find them in this core's L1 / L2. With 4 heads a grab (half a
    // group of 8) both cores fetched the same rows from DRAM, and a batch-8 decode's attention
    // was bound by those misses (perf: most of dotRowsRegs' samples on its first load of a row).
    const int itemsPerTask = group;
    pool->run((work + itemsPerTask - 1) / itemsPerTask, [&](int task) {
        for (int item = task * itemsPerTask; item < std::min(work, (task + 1) * itemsPerTask); ++item) attend(item);
    });
}

void pagedAttentionFast(const float* q, float* out, int n, int numHeads, int startPosition,
                        std::span<const int32_t> blockTable, const PagedKv& kv, const CpuVectorOps& ops,
                        CpuThreadPool* pool)
{
    const AttentionSequence one{q, out, n, startPosition, blockTable};
    pagedAttentionBatch(std::span(&one, 1), numHeads, kv, ops, pool);
}

}  // namespace brook::cpu
