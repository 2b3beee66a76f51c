// Paged attention kernels (src/cuda/paged_attention_*.cu) against the fp32 CPU reference
// brook::cpu::pagedAttention fed the same bf16/fp16-rounded q, K and V.
//
// Tolerance: max |gpu - ref| / max |ref| per sequence <= 2e-2 (bf16), 5e-3 (fp16). Inputs are
// identical, so the differences are the kernels' own roundings: P is rounded to the element type
// before the P.V tensor-core product (relative 2^-9 bf16, 2^-11 fp16 per weight) and the output is
// rounded once more (same steps); sums run in fp32 in another order (~1e-6). That is a few ulps
// of the element type, well inside the bounds, while a wrong key, mask or split shows as O(1).
// Unused cache slots are NaN and unused block-table entries INT32_MAX, so reading past a
// context fails loudly.
#include "cuda/cuda_device.h"
#include "cuda/cuda_features.h"
#include "paged_attention_fixture.h"

#include <QtTest>

using namespace brook;
using namespace brook::cudatest;

namespace {

template <typename T>
cuda::ElementType typeOf()
{
    return std::is_same_v<T, __nv_bfloat16> ? cuda::ElementType::BF16 : cuda::ElementType::F16;
}
template <typename T>
double tolOf()
{
    return std::is_same_v<T, __nv_bfloat16> ? 2e-2 : 5e-3;
}

AttentionProblem shape(int nh, int kvh, int hd, int bs, uint64_t seed)
{
    AttentionProblem p;
    p.numHeads = nh;
    p.numKvHeads = kvh;
    p.headDim = hd;
    p.blockSize = bs;
    p.seed = seed;
    return p;
}

AttentionProblem decodeProblem(AttentionProblem p, const std::vector<int>& contexts)
{
    for (int ctx : contexts) p.seqs.push_back(ctx > 0 ? SeqSpec{ctx - 1, 1, false} : SeqSpec{0, 1, true});
    return p;
}

QString describe(const char* kind, const AttentionProblem& p, cuda::ElementType type)
{
    return QString("%1 %2 NH%3/KVH%4/HD%5/BS%6")
        .arg(kind)
        .arg(cuda::elementTypeName(type))
        .arg(p.numHeads)
        .arg(p.numKvHeads)
        .arg(p.headDim)
        .arg(p.blockSize);
}

// Sized for up to maxSeqs sequences and zeroed once, as the engine must do.
cuda::DeviceBuffer decodeWorkspace(const AttentionProblem& p, int maxSeqs, int maxContextLen)
{
    cuda::DeviceBuffer workspace(
        cuda::paged_attention_decode_workspace_bytes(maxSeqs, p.numHeads, p.numKvHeads, p.headDim, maxContextLen));
    if (workspace.bytes()) BROOK_CUDA_CHECK(cudaMemset(workspace.get(), 0, workspace.bytes()));
    BROOK_CUDA_CHECK(cudaDeviceSynchronize());  // graph launches run on a non-blocking stream
    return workspace;
}

template <typename T>
QString runPrefill(const AttentionProblem& p)
{
    const auto c = makeAttentionCase<T>(p);
    AttentionDeviceCase d(p, c);
    cuda::launch_paged_attention_prefill(typeOf<T>(), d.q.get(), d.out.get(), d.k.get(), d.v.get(), d.batch(),
                                         c.maxQueryLen, shapeOf(p), nullptr);
    return compareAttention(describe("prefill", p, typeOf<T>()), p, c, d.result<T>(), referenceAttention(p, c),
                            tolOf<T>());
}

// The split-KV path: the same launch with a workspace, checked to split or not as expected and to
// match the reference. The output is poisoned first, so a row the merge misses fails.
template <typename T>
QString runPrefillSplit(const AttentionProblem& p, bool expectSplit)
{
    const auto c = makeAttentionCase<T>(p);
    AttentionDeviceCase d(p, c);
    const cuda::DeviceBuffer workspace(cuda::paged_attention_prefill_workspace_bytes(p.numHeads, p.headDim));
    cuda::PrefillSplit split;
    split.numTokens = c.tokens;
    split.maxContextLen = c.maxContext;
    split.workspace = workspace.get();
    split.workspaceBytes = workspace.bytes();
    const int splits = cuda::paged_attention_prefill_splits(int(p.seqs.size()), c.maxQueryLen, shapeOf(p), split);
    if ((splits > 1) != expectSplit)
        return QString("%1: %2 key splits, expected %3")
            .arg(describe("prefill", p, typeOf<T>()))
            .arg(splits)
            .arg(expectSplit ? "several" : "none");
    const bool inClusters =
        cuda::paged_attention_prefill_merges_in_cluster(int(p.seqs.size()), c.maxQueryLen, shapeOf(p), split);
    const QString label = describe("prefill", p, typeOf<T>()) +
                          QString(" (%1 key splits, merged %2)").arg(splits).arg(inClusters ? "in clusters" : "in L2");
    qInfo("%s", qPrintable(label));
    d.poisonOutput();
    cuda::launch_paged_attention_prefill(typeOf<T>(), d.q.get(), d.out.get(), d.k.get(), d.v.get(), d.batch(),
                                         c.maxQueryLen, shapeOf(p), nullptr, split);
    return compareAttention(label, p, c, d.result<T>(), referenceAttention(p, c), tolOf<T>());
}

template <typename T>
QString runDecode(const AttentionProblem& p, int maxContextLen)
{
    const auto c = makeAttentionCase<T>(p);
    AttentionDeviceCase d(p, c);
    const int numSeqs = int(p.seqs.size());
    const cuda::DeviceBuffer workspace = decodeWorkspace(p, numSeqs, maxContextLen);
    const int splits = cuda::paged_attention_decode_splits(numSeqs, p.numHeads, p.numKvHeads, maxContextLen);
    const std::vector<float> want = referenceAttention(p, c);
    // Twice on one workspace: the second launch relies on the first leaving its counters at zero.
    for (int launch = 1; launch <= 2; ++launch) {
        d.poisonOutput();
        cuda::launch_paged_attention_decode(typeOf<T>(), d.q.get(), d.out.get(), d.k.get(), d.v.get(), d.batch(),
                                            maxContextLen, shapeOf(p), workspace.get(), workspace.bytes(), nullptr);
        const QString label =
            describe("decode", p, typeOf<T>()) +
            QString(" maxContextLen %1 (%2 splits), launch %3").arg(maxContextLen).arg(splits).arg(launch);
        const QString error = compareAttention(label, p, c, d.result<T>(), want, tolOf<T>());
        if (!error.isEmpty()) return error;
    }
    return {};
}

#define CHECK_EMPTY(expr)                                                                                              \
    do {                                                                                                               \
        const QString brook_error_ = (expr);                                                                           \
        QVERIFY2(brook_error_.isEmpty(), qPrintable(brook_error_));                                                    \
    } while (0)

const std::vector<int> kDecodeContexts = {1, 15, 16, 17, 600, 3000};

}  // namespace

class TestPagedAttention : public QObject {
    Q_OBJECT

private slots:
    void prefillWholePromptsSmallShapes()
    {
        BROOK_REQUIRE_GPU();
        AttentionProblem a = shape(6, 2, 32, 16, 11);                        // G = 3: groups straddle the 64-row tiles
        a.seqs = {{0, 1}, {0, 5}, {0, 1, true}, {0, 16}, {0, 33}, {0, 70}};  // + a padding slot: zeros
        AttentionProblem b = shape(4, 4, 64, 8, 12);                         // G = 1, small blocks
        b.seqs = {{0, 64}, {0, 100}, {0, 3}, {0, 65}};
        CHECK_EMPTY(runPrefill<__nv_bfloat16>(a));
        CHECK_EMPTY(runPrefill<__half>(a));
        CHECK_EMPTY(runPrefill<__nv_bfloat16>(b));
        CHECK_EMPTY(runPrefill<__half>(b));
    }

    void prefillErnieWholePrompts()
    {
        BROOK_REQUIRE_GPU();
        AttentionProblem p = shape(16, 2, 128, 16, 21);
        p.seqs = {{0, 512}, {0, 7}, {0, 129}};
        CHECK_EMPTY(runPrefill<__nv_bfloat16>(p));
        CHECK_EMPTY(runPrefill<__half>(p));
        p.qPad = 2 * 2 * 128;  // q read in place from a fused [T, (NH + 2 KVH) * HD] QKV buffer
        p.seed = 22;
        CHECK_EMPTY(runPrefill<__nv_bfloat16>(p));
    }

    void prefillChunkedWithCachedPrefix()
    {
        BROOK_REQUIRE_GPU();
        AttentionProblem p = shape(16, 2, 128, 16, 31);
        p.seqs = {{300, 77}, {16, 16}, {1000, 1}, {0, 130}, {513, 64}, {15, 2}};
        CHECK_EMPTY(runPrefill<__nv_bfloat16>(p));
        CHECK_EMPTY(runPrefill<__half>(p));
        AttentionProblem s = shape(6, 2, 32, 16, 32);
        s.seqs = {{40, 9}, {64, 64}, {7, 1}};
        CHECK_EMPTY(runPrefill<__nv_bfloat16>(s));
        CHECK_EMPTY(runPrefill<__half>(s));
    }

    // Both merges of the split ranges: inside thread-block clusters (sm_90, the default there) and
    // through the workspace and a second kernel (other GPUs, or clusters switched off).
    void prefillSplitKeysForShortChunksOverLongContexts_data()
    {
        QTest::addColumn<bool>("clusters");
        QTest::newRow("cluster merge") << true;
        QTest::newRow("workspace merge") << false;
    }

    void prefillSplitKeysForShortChunksOverLongContexts()
    {
        BROOK_REQUIRE_GPU();
        QFETCH(bool, clusters);
        cuda::CudaFeatures features;
        features.threadBlockClusters = clusters;
        const FeaturesScope scope(features);
        // A chat turn after a prefix-cache hit: 83 new tokens over 1,717 cached (22 tiles).
        AttentionProblem chat = shape(16, 2, 128, 16, 61);
        chat.seqs = {{1717, 83}};
        CHECK_EMPTY(runPrefillSplit<__nv_bfloat16>(chat, true));
        CHECK_EMPTY(runPrefillSplit<__half>(chat, true));
        // Which merge ran: clusters only where the GPU has them (sm_90) and they are on.
        cuda::PrefillSplit split;
        split.numTokens = 83;
        split.maxContextLen = 1800;
        const cuda::DeviceBuffer workspace(cuda::paged_attention_prefill_workspace_bytes(16, 128));
        split.workspace = workspace.get();
        split.workspaceBytes = workspace.bytes();
        const bool merged = cuda::paged_attention_prefill_merges_in_cluster(1, 83, shapeOf(chat), split);
        // 22 CTAs, in clusters of up to 8, fit an H100 / H200 at once.
        QCOMPARE(merged, clusters && cuda::threadBlockClustersSupported());
        // A longer history: more ranges than a cluster holds when clusters are off (the workspace
        // path's up to 16), a cluster's 8 at most when they are on.
        AttentionProblem longer = shape(16, 2, 128, 16, 65);
        longer.seqs = {{3500, 83}};
        CHECK_EMPTY(runPrefillSplit<__nv_bfloat16>(longer, true));
        // 64 CTAs: clusters of 6-8 may not all fit at once, and then fewer or none are used.
        AttentionProblem wide = shape(16, 2, 128, 16, 66);
        wide.seqs = {{1717, 256}};
        CHECK_EMPTY(runPrefillSplit<__nv_bfloat16>(wide, true));
        // Mixed: ranges that leave some CTAs no keys (a short sequence), a padding slot (zeros), a
        // decode row, and a context that is not a multiple of the tile or the block.
        AttentionProblem mixed = shape(16, 2, 128, 16, 62);
        mixed.seqs = {{2000, 17}, {3, 5}, {0, 1, true}, {999, 1}, {1201, 64}};
        CHECK_EMPTY(runPrefillSplit<__nv_bfloat16>(mixed, true));
        CHECK_EMPTY(runPrefillSplit<__half>(mixed, true));
        AttentionProblem small = shape(6, 2, 32, 8, 63);  // G = 3, small blocks
        small.seqs = {{1500, 9}, {40, 2}};
        CHECK_EMPTY(runPrefillSplit<__nv_bfloat16>(small, true));
        // A batch whose tiles fill the GPU does not split (and still matches).
        AttentionProblem big = shape(16, 2, 128, 16, 64);
        big.seqs = {{0, 1024}, {100, 1024}};
        CHECK_EMPTY(runPrefillSplit<__nv_bfloat16>(big, false));
    }

    void prefillSplitsCountOnlyTilesWithRows()
    {
        BROOK_REQUIRE_GPU();
        // A captured prefill graph launches one sequence of up to T tokens beside a padding sequence,
        // both sized T, so half its grid exits at once. Its split count must be about that of the
        // same T tokens as one sequence: counting the grid gave the graph 5 key ranges against the
        // eager step's 9 at T = 128, and the graph's steps over long cached histories ran slower.
        cuda::AttentionShape shape;
        shape.numHeads = 16;
        shape.numKvHeads = 2;
        shape.headDim = 128;
        shape.blockSize = 16;
        const cuda::DeviceBuffer workspace(cuda::paged_attention_prefill_workspace_bytes(16, 128));
        cuda::PrefillSplit split;
        split.maxContextLen = 4096;
        split.workspace = workspace.get();
        split.workspaceBytes = workspace.bytes();
        for (const int tokens : {32, 128, 256}) {
            split.numTokens = tokens;
            const int eager = cuda::paged_attention_prefill_splits(1, tokens, shape, split);
            const int graph = cuda::paged_attention_prefill_splits(2, tokens, shape, split);
            QVERIFY2(eager > 1, qPrintable(QString("%1 tokens: %2 splits").arg(tokens).arg(eager)));
            QVERIFY2(
                graph >= eager - 1,
                qPrintable(
                    QString("%1 tokens: graph layout %2 splits, one sequence %3").arg(tokens).arg(graph).arg(eager)));
        }
    }

    void prefillWideGroup()
    {
        BROOK_REQUIRE_GPU();
        AttentionProblem p = shape(32, 1, 64, 16, 41);  // G = 32: a 64-row tile holds 2 tokens x 32 heads
        p.seqs = {{0, 33}, {50, 10}};
        CHECK_EMPTY(runPrefill<__nv_bfloat16>(p));
        CHECK_EMPTY(runPrefill<__half>(p));
    }

    void decodeErnieContexts()
    {
        BROOK_REQUIRE_GPU();
        const AttentionProblem p = decodeProblem(shape(16, 2, 128, 16, 51), kDecodeContexts);
        CHECK_EMPTY(runDecode<__nv_bfloat16>(p, 4096));
        CHECK_EMPTY(runDecode<__half>(p, 4096));
    }

    void decodeSplitSchemes()
    {
        BROOK_REQUIRE_GPU();
        // maxContextLen 64 forces one split even for 3000 keys (a context past the captured maximum
        // stays correct, only slower); 131072 gives the long-context split count.
        const AttentionProblem p = decodeProblem(shape(16, 2, 128, 16, 61), kDecodeContexts);
        CHECK_EMPTY(runDecode<__nv_bfloat16>(p, 64));
        CHECK_EMPTY(runDecode<__nv_bfloat16>(p, 131072));
        const AttentionProblem longOne = decodeProblem(shape(16, 2, 128, 16, 62), {20000, 129});
        CHECK_EMPTY(runDecode<__nv_bfloat16>(longOne, 131072));
        CHECK_EMPTY(runDecode<__half>(longOne, 32768));
        // 200 sequences fill the GPU without splitting; only the two long ones split (by the
        // 4096-key cap per CTA), the rest take one partition each.
        std::vector<int> contexts;
        for (int s = 0; s < 198; ++s) contexts.push_back(1 + (s * 37) % 90);
        contexts.insert(contexts.begin() + 50, 9000);
        contexts.push_back(13000);
        const AttentionProblem crowd = decodeProblem(shape(16, 2, 128, 16, 63), contexts);
        CHECK_EMPTY(runDecode<__nv_bfloat16>(crowd, 131072));
    }

    void decodeBatchOne()
    {
        BROOK_REQUIRE_GPU();
        // One sequence, as at batch-1 chat: short contexts merge their partitions inside a
        // thread-block cluster (sm_90), long ones through the workspace; both split counts.
        for (int ctx : {1, 64, 65, 384, 512, 513, 1000, 2048, 2100, 5000}) {
            const AttentionProblem p = decodeProblem(shape(16, 2, 128, 16, 90 + ctx % 97), {ctx});
            CHECK_EMPTY(runDecode<__nv_bfloat16>(p, 4096));
            CHECK_EMPTY(runDecode<__nv_bfloat16>(p, 131072));
        }
        const AttentionProblem f = decodeProblem(shape(16, 2, 128, 16, 99), {700});
        CHECK_EMPTY(runDecode<__half>(f, 4096));
    }

    // Prefill's K/V tile loads fetch a tile's block-table entries once per warp and hand each copy
    // its key's entry by shuffle (kvTileBlocks): up to 32 blocks a tile that way, so blocks of 2
    // keys read the table per key. Block sizes below, at and above the 64-key tile, prefill (split
    // and not), and decode (which reads an entry per key) at the same sizes.
    void blockSizesAroundTheTile()
    {
        BROOK_REQUIRE_GPU();
        for (int bs : {2, 4, 32, 64, 128}) {
            AttentionProblem whole = shape(16, 2, 128, bs, 200 + bs);
            whole.seqs = {{0, 70}, {0, 1, true}, {130, 3}};
            CHECK_EMPTY(runPrefill<__nv_bfloat16>(whole));
            AttentionProblem chat = shape(16, 2, 128, bs, 300 + bs);
            chat.seqs = {{1717, 83}};
            CHECK_EMPTY(runPrefillSplit<__nv_bfloat16>(chat, true));
            const AttentionProblem decode = decodeProblem(shape(16, 2, 128, bs, 400 + bs), {1, 65, 700, 1801});
            for (int maxContext : {128, 4096}) CHECK_EMPTY(runDecode<__half>(decode, maxContext));
        }
    }

    void decodeSmallShapes()
    {
        BROOK_REQUIRE_GPU();
        const AttentionProblem a = decodeProblem(shape(6, 2, 32, 16, 71), kDecodeContexts);
        const AttentionProblem b = decodeProblem(shape(4, 4, 64, 8, 72), {3, 64, 65, 999});
        const AttentionProblem c = decodeProblem(shape(32, 1, 64, 16, 73), {1, 100, 1500});  // two 16-head chunks
        AttentionProblem d = decodeProblem(shape(16, 2, 128, 16, 74), {33, 700});
        d.qPad = 512;
        for (int maxContext : {128, 4096}) {
            CHECK_EMPTY(runDecode<__nv_bfloat16>(a, maxContext));
            CHECK_EMPTY(runDecode<__half>(a, maxContext));
            CHECK_EMPTY(runDecode<__nv_bfloat16>(b, maxContext));
            CHECK_EMPTY(runDecode<__half>(c, maxContext));
            CHECK_EMPTY(runDecode<__nv_bfloat16>(d, maxContext));
        }
    }

    void sharpLogits()
    {
        BROOK_REQUIRE_GPU();
        // q scaled by 20: logits of tens to hundreds, exp() overflows without the running max.
        AttentionProblem p = decodeProblem(shape(16, 2, 128, 16, 81), kDecodeContexts);
        p.qScale = 20.0f;
        CHECK_EMPTY(runDecode<__nv_bfloat16>(p, 4096));
        CHECK_EMPTY(runDecode<__half>(p, 4096));
        AttentionProblem q = shape(16, 2, 128, 16, 82);
        q.seqs = {{200, 100}, {0, 65}};
        q.qScale = 20.0f;
        CHECK_EMPTY(runPrefill<__nv_bfloat16>(q));
        CHECK_EMPTY(runPrefill<__half>(q));
    }

    void decodeCudaGraphReplay()
    {
        BROOK_REQUIRE_GPU();
        graphReplay<__nv_bfloat16>();
        graphReplay<__half>();
    }

    void rejectsBadArguments()
    {
        BROOK_REQUIRE_GPU();
        AttentionProblem p = decodeProblem(shape(16, 2, 96, 16, 91), {5});
        const auto c = makeAttentionCase<__half>(p);
        AttentionDeviceCase d(p, c);
        bool threw = false;
        try {
            cuda::launch_paged_attention_prefill(cuda::ElementType::F16, d.q.get(), d.out.get(), d.k.get(), d.v.get(),
                                                 d.batch(), 1, shapeOf(p), nullptr);
        } catch (const cuda::CudaError&) {
            threw = true;
        }
        QVERIFY2(threw, "head dim 96 must be refused");
        p.headDim = 128;
        threw = false;
        try {  // positions map to blocks by shift and mask
            cuda::AttentionShape odd = shapeOf(p);
            odd.blockSize = 12;
            cuda::launch_paged_attention_prefill(cuda::ElementType::F16, d.q.get(), d.out.get(), d.k.get(), d.v.get(),
                                                 d.batch(), 1, odd, nullptr);
        } catch (const cuda::CudaError&) {
            threw = true;
        }
        QVERIFY2(threw, "block size 12 must be refused");
        p.seqs.clear();
        p = decodeProblem(p, {4000, 4000});
        const auto e = makeAttentionCase<__half>(p);
        AttentionDeviceCase f(p, e);
        threw = false;
        try {  // 4000 keys over several splits need a workspace; none given
            cuda::launch_paged_attention_decode(cuda::ElementType::F16, f.q.get(), f.out.get(), f.k.get(), f.v.get(),
                                                f.batch(), 4096, shapeOf(p), nullptr, 0, nullptr);
        } catch (const cuda::CudaError&) {
            threw = true;
        }
        const bool needsWorkspace = cuda::paged_attention_decode_splits(2, 16, 2, 4096) > 1;
        QCOMPARE(threw, needsWorkspace);
    }

private:
    // Captures one decode launch in a CUDA graph, replays it, then changes every context length,
    // block table and query behind the graph's back and replays it again.
    template <typename T>
    void graphReplay()
    {
        const int maxContext = 4096, blockSize = 16;
        const AttentionProblem a = decodeProblem(shape(16, 2, 128, blockSize, 101), {5, 300, 1, 2000, 0, 64});
        const AttentionProblem b = decodeProblem(shape(16, 2, 128, blockSize, 102), {700, 17, 0, 1, 2500, 65});
        const int blocks = 400, tableWidth = maxContext / blockSize + 1;
        const auto ca = makeAttentionCase<T>(a, blocks, tableWidth);
        const auto cb = makeAttentionCase<T>(b, blocks, tableWidth);
        AttentionDeviceCase d(a, ca);
        // Sized for 64 sequences like an engine's largest bucket: a smaller batch must not clobber the counters.
        const cuda::DeviceBuffer workspace = decodeWorkspace(a, 64, maxContext);

        cudaStream_t stream = nullptr;
        BROOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        cudaGraph_t graph = nullptr;
        BROOK_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        cuda::launch_paged_attention_decode(typeOf<T>(), d.q.get(), d.out.get(), d.k.get(), d.v.get(), d.batch(),
                                            maxContext, shapeOf(a), workspace.get(), workspace.bytes(), stream);
        BROOK_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        cudaGraphExec_t exec = nullptr;
        BROOK_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

        BROOK_CUDA_CHECK(cudaGraphLaunch(exec, stream));
        BROOK_CUDA_CHECK(cudaStreamSynchronize(stream));
        const QString first = compareAttention(describe("graph replay 1", a, typeOf<T>()), a, ca, d.result<T>(),
                                               referenceAttention(a, ca), tolOf<T>());
        d.overwrite(cb);
        BROOK_CUDA_CHECK(cudaGraphLaunch(exec, stream));
        BROOK_CUDA_CHECK(cudaStreamSynchronize(stream));
        const QString second = compareAttention(describe("graph replay 2 (new contexts)", b, typeOf<T>()), b, cb,
                                                d.result<T>(), referenceAttention(b, cb), tolOf<T>());
        BROOK_CUDA_CHECK(cudaGraphExecDestroy(exec));
        BROOK_CUDA_CHECK(cudaGraphDestroy(graph));
        BROOK_CUDA_CHECK(cudaStreamDestroy(stream));
        CHECK_EMPTY(first);
        CHECK_EMPTY(second);
    }
};

QTEST_APPLESS_MAIN(TestPagedAttention)
#include "test_paged_attention.moc"
