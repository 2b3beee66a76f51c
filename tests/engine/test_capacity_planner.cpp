// CapacityPlanner on the ERNIE-4.5-0.3B shape against figures worked out by hand (each case's
// arithmetic is in its comments), plus the binding knob, the "cannot fit" problems and the changes
// suggested for them, and agreement with the tiny model's real CPU backend.
#include "engine_test_support.h"

#include "engine/capacity_planner.h"

#include <QtTest>

using namespace brook;

namespace {

constexpr int64_t GiB = 1LL << 30;

ModelConfig ernie03b()
{
    ModelConfig c;
    c.vocabSize = 103424;
    c.hiddenSize = 1024;
    c.intermediateSize = 3072;
    c.numLayers = 18;
    c.numHeads = 16;
    c.numKvHeads = 2;
    c.headDim = 128;
    c.maxPositionEmbeddings = 131072;
    c.tieWordEmbeddings = true;
    return c;
}

CapacityInput cuda(int64_t total, double utilization, int maxModelLen)
{
    CapacityInput in;
    in.model = ernie03b();
    in.device = "cuda";
    in.deviceTotalBytes = total;
    in.gpuMemoryUtilization = utilization;
    in.maxModelLen = maxModelLen;
    in.maxNumSeqs = 256;
    in.maxNumBatchedTokens = 8192;
    in.blockSize = 16;
    return in;
}

}  // namespace

class TestCapacityPlanner : public QObject {
    Q_OBJECT
private slots:
    void ernieWeightsAndKvBytes()
    {
        // Per layer: q 1024*2048 + k,v 2*1024*256 + o 2048*1024 + MLP 3*1024*3072 + 2 norms of 1024
        //   = 2,097,152 + 524,288 + 2,097,152 + 9,437,184 + 2,048 = 14,157,824; x 18 = 254,840,832.
        // Embeddings 103,424 * 1,024 = 105,906,176, final norm 1,024, tied head: 360,748,032.
        QCOMPARE(CapacityPlanner::parameterCount(ernie03b()), int64_t(360748032));
        QCOMPARE(CapacityPlanner::weightBytes(ernie03b(), 2, {}), int64_t(721496064));  // ~0.72 GB in bf16
        const CapacityPlan p = CapacityPlanner::plan(cuda(80 * GiB, 0.9, 4096));
        QCOMPARE(p.kvBytesPerToken, int64_t(18432));  // 18 layers x 2 (K, V) x 2 heads x 128 x 2 bytes
        QCOMPARE(p.kvBytesPerBlock, int64_t(18432 * 16));
        QCOMPARE(p.weightsBytes, int64_t(721496064));
    }

    void quantizedWeights()
    {
        // Linear weights: 14,155,776 per layer x 18 = 254,803,968; the rest (embeddings, norms)
        // 105,944,064 parameters stay bf16 = 211,888,128 bytes.
        // Groups of 128 along K per layer, N * K / 128: q 2,048 * 8 = 16,384; k, v 2 * 256 * 8 =
        // 4,096; o 1,024 * 16 = 16,384; gate, up 2 * 3,072 * 8 = 49,152; down 1,024 * 24 = 24,576;
        // sum 110,592, x 18 layers = 1,990,656 groups, x 3 bytes (fp16 scale + 1-byte zero) = 5,971,968.
        // int4: 254,803,968 / 2 = 127,401,984 bytes of codes.
        QCOMPARE(CapacityPlanner::weightBytes(ernie03b(), 2, "int4"), int64_t(211888128 + 127401984 + 5971968));
        QCOMPARE(CapacityPlanner::weightBytes(ernie03b(), 2, "awq"), int64_t(345262080));
        // int8: one byte each, 254,803,968, plus the same groups.
        QCOMPARE(CapacityPlanner::weightBytes(ernie03b(), 2, "int8"), int64_t(211888128 + 254803968 + 5971968));
    }

    void activationsFollowTheCudaBuffers()
    {
        // Per batched token: fp32 residual 4,096 + normed 2,048 + qkv 2,560*2 = 5,120 + q and
        // attention output 2*2,048*2 = 8,192 + gate|up 6,144*2 = 12,288 + act 3,072*2 = 6,144 = 37,888.
        // Per sampled row: final norm 2,048 + fp32 logits 413,696 + sampler scratch 413,696 = 829,440.
        // 8,192 * 37,888 + 256 * 829,440 = 310,378,496 + 212,336,640.
        QCOMPARE(CapacityPlanner::activationBytes(ernie03b(), 8192, 256, 2), int64_t(522715136));
        // Fewer batched tokens than sequences: the buffers still hold one token per sequence.
        QCOMPARE(CapacityPlanner::activationBytes(ernie03b(), 128, 256, 2), int64_t(256 * 37888 + 256 * 829440));
    }

    void anEightyGigabyteGpuIsBoundByMaxNumSeqs()
    {
        CapacityInput in = cuda(80 * GiB, 0.9, 4096);
        in.enforceEager = true;  // no graph reserve
        const CapacityPlan p = CapacityPlanner::plan(in);
        // Budget int(85,899,345,920 * 0.9) = 77,309,411,328; minus weights 721,496,064 and
        // activations 522,715,136 + 268,435,456 runtime = 75,796,764,672 for the KV cache;
        // / 294,912 bytes a block = 257,014 blocks (4,112,224 tokens), 1,003.96x at 4,096 tokens.
        QCOMPARE(p.budgetBytes, int64_t(77309411328));
        QCOMPARE(p.activationBytes, int64_t(791150592));
        QCOMPARE(p.graphBytes, int64_t(0));
        QCOMPARE(p.kvBlocks, int64_t(257014));
        QCOMPARE(p.kvTokens, int64_t(4112224));
        QCOMPARE(p.kvCacheBytes, int64_t(257014) * 294912);
        QVERIFY(qAbs(p.maxConcurrency - 1003.9609375) < 1e-9);
        QCOMPARE(p.blocksPerSequence, 256);
        QCOMPARE(p.fullLengthSequences, 1003);
        QCOMPARE(p.concurrentSequences, 256);
        QCOMPARE(p.binding, CapacityLimit::MaxNumSeqs);
        QVERIFY(p.fits());
        // With CUDA graphs the 256 MiB reserve comes off the cache: 910 blocks fewer.
        in.enforceEager = false;
        const CapacityPlan graphs = CapacityPlanner::plan(in);
        QCOMPARE(graphs.graphBytes, int64_t(256) << 20);
        QCOMPARE(graphs.kvBlocks, int64_t((75796764672LL - (256LL << 20)) / 294912));
    }

    void aLongContextOnTwentyFourGigabytesIsBoundByTheKvCache()
    {
        const CapacityPlan p = CapacityPlanner::plan(cuda(24 * GiB, 0.9, 131072));
        // int(25,769,803,776 * 0.9) = 23,192,823,398 - 721,496,064 - 791,150,592 - 268,435,456
        // = 21,411,741,286 -> 72,603 blocks; a 131,072-token request needs 8,192 of them: 8 at once.
        QCOMPARE(p.kvBlocks, int64_t(72603));
        QCOMPARE(p.blocksPerSequence, 8192);
        QCOMPARE(p.fullLengthSequences, 8);
        QCOMPARE(p.concurrentSequences, 8);
        QCOMPARE(p.binding, CapacityLimit::KvCache);
        QVERIFY(p.fits());
    }

    void fewBatchedTokensBind()
    {
        CapacityInput in = cuda(80 * GiB, 0.9, 4096);
        in.enforceEager = true;
        in.maxNumBatchedTokens = 128;
        const CapacityPlan p = CapacityPlanner::plan(in);
        QCOMPARE(p.binding, CapacityLimit::MaxNumBatchedTokens);
        QCOMPARE(p.concurrentSequences, 128);
        QCOMPARE(p.kvBlocks, int64_t(258034));  // smaller activations leave more room
    }

    void aSettingThatCannotFitSaysWhatWould()
    {
        CapacityInput in = cuda(8 * GiB, 0.3, 131072);
        in.enforceEager = true;
        const CapacityPlan p = CapacityPlanner::plan(in);
        // int(8 GiB * 0.3) = 2,576,980,377 - 1,512,646,656 fixed = 1,064,333,721 -> 3,608 blocks,
        // but one 131,072-token request needs 8,192 blocks (2,415,919,104 bytes).
        QCOMPARE(p.kvBlocks, int64_t(3608));
        QCOMPARE(p.problem, CapacityProblem::KvCacheTooSmall);
        QVERIFY(!p.fits());
        // (1,512,646,656 + 2,415,919,104) / 8,589,934,592 = 0.4573 -> 0.46; or 57,728 tokens.
        QCOMPARE(p.suggestedGpuMemoryUtilization, 0.46);
        QCOMPARE(p.suggestedMaxModelLen, 57728);
        // Each suggestion, applied, fits.
        CapacityInput a = in;
        a.gpuMemoryUtilization = p.suggestedGpuMemoryUtilization;
        QVERIFY(CapacityPlanner::plan(a).fits());
        CapacityInput b = in;
        b.maxModelLen = p.suggestedMaxModelLen;
        QVERIFY(CapacityPlanner::plan(b).fits());
        QVERIFY(!CapacityPlanner::plan([&] {
                     CapacityInput c = a;
                     c.gpuMemoryUtilization = 0.45;
                     return c;
                 }())
                     .fits());
    }

    void weightsThatDoNotFitAndOtherProblems()
    {
        const CapacityPlan tiny = CapacityPlanner::plan(cuda(2 * GiB, 0.5, 131072));
        QCOMPARE(tiny.problem, CapacityProblem::WeightsDoNotFit);
        QCOMPARE(tiny.kvBlocks, int64_t(0));
        QCOMPARE(tiny.suggestedGpuMemoryUtilization, 0.0);  // even 100% of 2 GiB is too little
        QCOMPARE(CapacityPlanner::plan(cuda(0, 0.9, 4096)).problem, CapacityProblem::NoDeviceMemory);
        const CapacityPlan tooLong = CapacityPlanner::plan(cuda(80 * GiB, 0.9, 200000));
        QCOMPARE(tooLong.problem, CapacityProblem::ModelLenTooLong);
        QCOMPARE(tooLong.suggestedMaxModelLen, 131072);
        QCOMPARE(CapacityPlanner::plan(cuda(80 * GiB, 0.9, 0)).maxModelLen, 131072);  // 0: the model's
    }

    void cpuPlanUsesFp32AndTheHostCache()
    {
        CapacityInput in;
        in.model = ernie03b();
        in.device = "cpu";
        in.maxModelLen = 4096;
        in.maxNumSeqs = 16;
        in.cpuKvCacheBytes = 2 * GiB;
        const CapacityPlan p = CapacityPlanner::plan(in);
        // fp32: 36,864 bytes a token; 16 full sequences would want 2,415,919,104 > 2 GiB, so the
        // cache is 2 GiB: 2,147,483,648 / 589,824 = 3,640 blocks, 58,240 tokens, 14 full requests.
        QCOMPARE(p.kvBytesPerToken, int64_t(36864));
        QCOMPARE(p.weightsBytes, int64_t(1442992128));
        QCOMPARE(p.kvBlocks, int64_t(3640));
        QCOMPARE(p.kvTokens, int64_t(58240));
        QCOMPARE(p.fullLengthSequences, 14);
        QCOMPARE(p.binding, CapacityLimit::KvCache);
        in.cpuKvCacheBytes = 64 << 20;  // 113 blocks: not one 4,096-token request
        const CapacityPlan small = CapacityPlanner::plan(in);
        QCOMPARE(small.problem, CapacityProblem::KvCacheTooSmall);
        QCOMPARE(small.suggestedCpuKvCacheBytes, int64_t(256) * 589824);
        QCOMPARE(small.suggestedMaxModelLen, 113 * 16);
    }

    void cpuPlanKeepsTheCheckpointsBf16()
    {
        // The CPU backend keeps a bf16 checkpoint bf16 (the same bytes as the GPU's bf16 weights),
        // int8 Linears and the tied embedding/head 8-bit (measured: 0.383 GB, docs/benchmarks.md),
        // int4 Linears 4-bit with the embedding/head int8.
        CapacityInput in;
        in.model = ernie03b();
        in.model.torchDtype = "bfloat16";
        in.device = "cpu";
        in.maxModelLen = 4096;
        QCOMPARE(CapacityPlanner::plan(in).weightsBytes, int64_t(721496064));
        in.quantization = "int8";
        // 360,710,144 int8 weights, 2,818,048 groups of 128 at 8 bytes, 37,888 bf16 norm weights.
        QCOMPARE(CapacityPlanner::plan(in).weightsBytes, int64_t(360710144 + 22544384 + 75776));
        in.quantization = "int4";
        // 254,803,968 Linear weights at half a byte, 105,906,176 int8 embedding weights, the same
        // groups and norms.
        QCOMPARE(CapacityPlanner::plan(in).weightsBytes, int64_t(127401984 + 105906176 + 22544384 + 75776));
    }

    void cpuPlanMatchesTheRealBackend()
    {
        // The tiny random model's CPU backend must get exactly the blocks the plan promises.
        LaunchOptions o = testsupport::cpuOptions();
        o.cpuKvCacheBytes = 3 << 20;
        auto engine = testsupport::launch(o);
        CapacityInput in;
        in.model = engine->modelConfig();
        in.device = "cpu";
        in.maxModelLen = o.maxModelLen;
        in.maxNumSeqs = o.maxNumSeqs;
        in.maxNumBatchedTokens = o.maxNumBatchedTokens;
        in.blockSize = o.blockSize;
        in.cpuKvCacheBytes = o.cpuKvCacheBytes;
        const CapacityPlan p = CapacityPlanner::plan(in);
        const EngineStats s = engine->stats();
        QCOMPARE(p.kvBlocks, int64_t(s.numKvBlocksTotal));
        QCOMPARE(p.kvCacheBytes, s.memory.kvCacheBytes);
        QCOMPARE(p.weightsBytes, s.memory.weightsBytes);
    }
};

QTEST_APPLESS_MAIN(TestCapacityPlanner)
#include "test_capacity_planner.moc"
