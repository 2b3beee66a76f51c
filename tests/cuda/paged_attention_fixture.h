// Builds paged-attention problems for tests/cuda/test_paged_attention.cpp: random q and caches
// rounded to the element type, shuffled block tables, and the fp32 CPU reference
// (brook::cpu::pagedAttention) on the rounded values. Cache slots no sequence owns, and
// block-table entries past a context, are poisoned (NaN, INT32_MAX) so a kernel that reads past
// a context produces NaN or faults instead of passing by luck.
#pragma once

#include "cuda/paged_attention.h"
#include "cuda_test_support.h"
#include "engine/cpu/cpu_ops.h"

#include <QString>

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <numeric>

namespace brook::cudatest {

struct SeqSpec {
    int cached = 0;       // tokens already in the cache before this step
    int fresh = 1;        // new query tokens (context = cached + fresh)
    bool padded = false;  // a padding slot: contextLens = 0, expects zeros
};

struct AttentionProblem {
    int numHeads = 16, numKvHeads = 2, headDim = 128, blockSize = 16;
    std::vector<SeqSpec> seqs;
    float qScale = 1.0f;
    int qPad = 0;  // extra elements after each token's q row (q read from a wider buffer)
    uint64_t seed = 1;
    int qStride() const { return numHeads * headDim + qPad; }
};

// Host images of one problem: device-typed values and the same values as float.
template <typename T>
struct AttentionCase {
    std::vector<int32_t> queryStart, contextLens, blockTables;
    int numBlocks = 0, maxBlocks = 0, tokens = 0, maxQueryLen = 0, maxContext = 0;
    std::vector<T> q, k, v;
    std::vector<float> qRef, kRef, vRef;
};

template <typename T>
AttentionCase<T> makeAttentionCase(const AttentionProblem& p, int minBlocks = 0, int minMaxBlocks = 0)
{
    AttentionCase<T> c;
    const int numSeqs = int(p.seqs.size());
    std::vector<int> blocksOf(numSeqs);
    c.queryStart.push_back(0);
    for (int s = 0; s < numSeqs; ++s) {
        const SeqSpec& spec = p.seqs[s];
        const int ctx = spec.padded ? 0 : spec.cached + spec.fresh;
        c.contextLens.push_back(ctx);
        c.queryStart.push_back(c.queryStart.back() + spec.fresh);
        c.maxQueryLen = std::max(c.maxQueryLen, spec.fresh);
        c.maxContext = std::max(c.maxContext, ctx);
        blocksOf[s] = (ctx + p.blockSize - 1) / p.blockSize;
        c.maxBlocks = std::max(c.maxBlocks, blocksOf[s] + 2);
        c.numBlocks += blocksOf[s];
    }
    c.tokens = c.queryStart.back();
    c.numBlocks = std::max(c.numBlocks + 5, minBlocks);
    c.maxBlocks = std::max(c.maxBlocks, minMaxBlocks);

    std::mt19937_64 rng(p.seed * 7919 + 13);
    std::vector<int32_t> ids(c.numBlocks);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    c.blockTables.assign(size_t(numSeqs) * c.maxBlocks, INT32_MAX);
    size_t next = 0;
    for (int s = 0; s < numSeqs; ++s)
        for (int b = 0; b < blocksOf[s]; ++b) c.blockTables[size_t(s) * c.maxBlocks + b] = ids[next++];

    const size_t rowElems = size_t(p.blockSize) * p.numKvHeads * p.headDim;  // one block
    std::vector<float> k = randomFloats(c.numBlocks * rowElems, p.seed * 3 + 1);
    std::vector<float> v = randomFloats(c.numBlocks * rowElems, p.seed * 3 + 2);
    std::vector<char> owned(size_t(c.numBlocks) * p.blockSize, 0);
    for (int s = 0; s < numSeqs; ++s)
        for (int j = 0; j < c.contextLens[s]; ++j)
            owned[size_t(c.blockTables[size_t(s) * c.maxBlocks + j / p.blockSize]) * p.blockSize + j % p.blockSize] = 1;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const size_t slotElems = size_t(p.numKvHeads) * p.headDim;
    for (size_t slot = 0; slot < owned.size(); ++slot)
        if (!owned[slot]) {
            std::fill_n(k.begin() + slot * slotElems, slotElems, nan);
            std::fill_n(v.begin() + slot * slotElems, slotElems, nan);
        }
    c.q = toDevice<T>(randomFloats(size_t(c.tokens) * p.qStride(), p.seed * 3, p.qScale));
    c.k = toDevice<T>(k);
    c.v = toDevice<T>(v);
    c.qRef = toHostFloat(c.q);
    c.kRef = toHostFloat(c.k);
    c.vRef = toHostFloat(c.v);
    return c;
}

// fp32 reference output [tokens, NH, HD]; padded slots stay zero.
template <typename T>
std::vector<float> referenceAttention(const AttentionProblem& p, const AttentionCase<T>& c)
{
    const int rowElems = p.numHeads * p.headDim;
    std::vector<float> out(size_t(c.tokens) * rowElems, 0.0f);
    cpu::PagedKv kv;
    kv.k = c.kRef.data();
    kv.v = c.vRef.data();
    kv.blockSize = p.blockSize;
    kv.numKvHeads = p.numKvHeads;
    kv.headDim = p.headDim;
    for (size_t s = 0; s < p.seqs.size(); ++s) {
        if (p.seqs[s].padded) continue;
        const int n = p.seqs[s].fresh, first = c.queryStart[s];
        std::vector<float> q(size_t(n) * rowElems);
        for (int i = 0; i < n; ++i)
            std::memcpy(&q[size_t(i) * rowElems], &c.qRef[size_t(first + i) * p.qStride()], rowElems * sizeof(float));
        const int blocks = (c.contextLens[s] + p.blockSize - 1) / p.blockSize;
        std::span<const int32_t> table(&c.blockTables[s * c.maxBlocks], size_t(blocks));
        cpu::pagedAttention(q.data(), &out[size_t(first) * rowElems], n, p.numHeads, c.contextLens[s] - n, table, kv);
    }
    return out;
}

// Per-sequence check: max |got - want| / max |want| over the sequence's rows <= tol, no NaN.
// Returns an empty string on success, else what failed and where.
template <typename T>
QString compareAttention(const QString& label, const AttentionProblem& p, const AttentionCase<T>& c,
                         const std::vector<float>& got, const std::vector<float>& want, double tol)
{
    const int HD = p.headDim, rowElems = p.numHeads * HD;
    for (size_t s = 0; s < p.seqs.size(); ++s) {
        const size_t begin = size_t(c.queryStart[s]) * rowElems, end = size_t(c.queryStart[s + 1]) * rowElems;
        double maxDiff = 0.0, maxRef = 1e-6;
        size_t worst = begin;
        for (size_t i = begin; i < end; ++i) {
            const double diff = std::isfinite(got[i]) ? std::abs(double(got[i]) - want[i]) : INFINITY;
            if (diff > maxDiff) {
                maxDiff = diff;
                worst = i;
            }
            maxRef = std::max(maxRef, double(std::abs(want[i])));
        }
        const double rel = p.seqs[s].padded ? maxDiff : maxDiff / maxRef;
        if (!(rel <= tol)) {
            const size_t local = worst - begin;
            const int token = int(local / rowElems), head = int(local % rowElems) / HD, dim = int(local % HD);
            return QString("%1: seq %2 (cached %3, new %4, context %5%6): rel err %7 > tol %8 at token %9 "
                           "(position %10) head %11 dim %12: got %13, want %14 (max |want| %15)")
                .arg(label)
                .arg(s)
                .arg(p.seqs[s].cached)
                .arg(p.seqs[s].fresh)
                .arg(c.contextLens[s])
                .arg(QString(p.seqs[s].padded ? ", padded" : ""))
                .arg(rel, 0, 'g', 3)
                .arg(tol)
                .arg(token)
                .arg(c.contextLens[s] - p.seqs[s].fresh + token)
                .arg(head)
                .arg(dim)
                .arg(double(got[worst]), 0, 'g', 6)
                .arg(double(want[worst]), 0, 'g', 6)
                .arg(maxRef, 0, 'g', 4);
        }
    }
    return {};
}

// Device copies of a case; `overwrite` refills the same allocations (for CUDA graph replays).
struct AttentionDeviceCase {
    cuda::DeviceBuffer q, k, v, queryStart, contextLens, blockTables, out;
    int numSeqs = 0, maxBlocks = 0, tokens = 0, rowElems = 0;

    template <typename T>
    AttentionDeviceCase(const AttentionProblem& p, const AttentionCase<T>& c)
        : q(upload(c.q)), k(upload(c.k)), v(upload(c.v)), queryStart(upload(c.queryStart)),
          contextLens(upload(c.contextLens)), blockTables(upload(c.blockTables)),
          out(size_t(c.tokens) * p.numHeads * p.headDim * sizeof(T)), numSeqs(int(p.seqs.size())),
          maxBlocks(c.maxBlocks), tokens(c.tokens), rowElems(p.numHeads * p.headDim)
    {
        poisonOutput();
    }

    template <typename T>
    void overwrite(const AttentionCase<T>& c)
    {
        auto put = [](cuda::DeviceBuffer& dst, const auto& host) {
            const size_t bytes = host.size() * sizeof(host[0]);
            QVERIFY2(bytes <= dst.bytes(), "replacement case is larger than the captured buffers");
            BROOK_CUDA_CHECK(cudaMemcpy(dst.get(), host.data(), bytes, cudaMemcpyHostToDevice));
        };
        put(q, c.q);
        put(k, c.k);
        put(v, c.v);
        put(queryStart, c.queryStart);
        put(contextLens, c.contextLens);
        put(blockTables, c.blockTables);
        poisonOutput();
    }

    // 0xFFFF is NaN in both bf16 and fp16: rows the kernel forgets to write fail the check.
    // Synchronises, so that launches on other streams see the uploads complete.
    void poisonOutput()
    {
        BROOK_CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
        BROOK_CUDA_CHECK(cudaDeviceSynchronize());
    }

    cuda::AttentionBatch batch() const
    {
        cuda::AttentionBatch b;
        b.numSeqs = numSeqs;
        b.queryStart = queryStart.as<const int32_t>();
        b.contextLens = contextLens.as<const int32_t>();
        b.blockTables = blockTables.as<const int32_t>();
        b.maxBlocksPerSeq = maxBlocks;
        return b;
    }

    template <typename T>
    std::vector<float> result() const
    {
        return toHostFloat(download<T>(out, size_t(tokens) * rowElems));
    }
};

inline cuda::AttentionShape shapeOf(const AttentionProblem& p)
{
    cuda::AttentionShape s;
    s.numHeads = p.numHeads;
    s.numKvHeads = p.numKvHeads;
    s.headDim = p.headDim;
    s.blockSize = p.blockSize;
    s.qTokenStride = p.qPad ? p.qStride() : 0;
    return s;
}

}  // namespace brook::cudatest
