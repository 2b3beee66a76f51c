// The serving knobs' one home: parsing device, dtype and policy at the edge; one mapping from
// generation_config.json to sampling knobs; the capacity planner's KV sizing that the launcher
// and the CUDA backend call.
#include "engine/capacity_planner.h"
#include "engine/generation_config.h"
#include "engine/sampling_params.h"
#include "engine/serving_settings.h"

#include <QtTest>

using namespace brook;

namespace {
// Knobs without min_p, as the app's ChatSettings: the mapping skips what a type lacks.
struct KnobsWithoutMinP {
    double temperature = 0.8, topP = 0.8, repetitionPenalty = 1.0, presencePenalty = 0.0, frequencyPenalty = 0.0;
    int topK = 0;
};

ModelConfig ernieShape()
{
    ModelConfig c;
    c.hiddenSize = 1024;
    c.intermediateSize = 3072;
    c.numLayers = 18;
    c.numHeads = 16;
    c.numKvHeads = 2;
    c.headDim = 128;
    c.vocabSize = 103424;
    c.maxPositionEmbeddings = 131072;
    c.tieWordEmbeddings = true;
    return c;
}
}  // namespace

class TestServingSettings : public QObject {
    Q_OBJECT
private slots:
    void flagsParseIntoEnumsWithTheirSpellings()
    {
        QCOMPARE(*parseDTypeChoice("bf16"), DTypeChoice::BFloat16);
        QCOMPARE(*parseDTypeChoice("half"), DTypeChoice::Float16);
        QCOMPARE(*parseDTypeChoice("fp32"), DTypeChoice::Float32);
        QCOMPARE(std::string(dtypeChoiceName(*parseDTypeChoice("fp16"))), std::string("float16"));
        auto badDtype = parseDTypeChoice("int3");
        QVERIFY(!badDtype.ok());
        QCOMPARE(badDtype.failure().field, std::string("dtype"));

        QCOMPARE(*parseDeviceChoice("auto"), DeviceChoice::Auto);
        QCOMPARE(*parseDeviceChoice("cuda"), DeviceChoice::Cuda);
        QCOMPARE(parseDeviceChoice("tpu").failure().field, std::string("device"));

        QCOMPARE(*parseSchedulingPolicy("priority"), SchedulingPolicy::Priority);
        QCOMPARE(parseSchedulingPolicy("lifo").failure().code, ErrorCode::InvalidArgument);
    }

    void generationConfigMapsOnceForEveryKnobType()
    {
        GenerationDefaults d;
        d.temperature = 0.6f;
        d.topP = 0.9f;
        d.minP = 0.05f;
        d.repetitionPenalty = 1.1f;
        SamplingParams p;
        applyGenerationDefaults(d, p);
        QCOMPARE(p.temperature, 0.6f);
        QCOMPARE(p.topP, 0.9f);
        QCOMPARE(p.minP, 0.05f);
        QCOMPARE(p.repetitionPenalty, 1.1f);
        QCOMPARE(p.topK, 0);  // absent: the knob's own default stays

        KnobsWithoutMinP k;
        applyGenerationDefaults(d, k);
        QCOMPARE(k.temperature, double(0.6f));
        QCOMPARE(k.topK, 0);

        d.doSample = false;  // greedy, whatever temperature says
        applyGenerationDefaults(d, p);
        QCOMPARE(p.temperature, 0.0f);
    }

    void thePlannerAndTheLauncherSizeTheCpuCacheAlike()
    {
        CapacityInput in;
        in.model = ernieShape();
        in.device = "cpu";
        in.maxModelLen = 4096;
        in.maxNumSeqs = 2;
        in.cpuKvCacheBytes = int64_t(8) << 30;  // more than two sequences need
        const int64_t wanted = in.model.kvBytesPerToken(4) * 4096 * 2;
        QCOMPARE(CapacityPlanner::cpuKvCacheBytes(in.model, in, 4096), wanted);
        const CapacityPlan plan = CapacityPlanner::plan(in);
        QCOMPARE(plan.kvCacheBytes, wanted);  // whole blocks: 4096 is a multiple of 16
        in.cpuKvCacheBytes = 1 << 20;         // less than wanted: the offer binds
        QCOMPARE(CapacityPlanner::cpuKvCacheBytes(in.model, in, 4096), int64_t(1) << 20);
    }

    void theCudaCacheIsTheBudgetLessWhatWasMeasured()
    {
        const int64_t total = int64_t(80) << 30;
        const int64_t used = int64_t(3) << 30;
        const int64_t eager = CapacityPlanner::cudaKvCacheBytes(total, 0.5, true, used);
        QCOMPARE(eager, (int64_t(40) << 30) - used);
        QCOMPARE(CapacityPlanner::cudaKvCacheBytes(total, 0.5, false, used), eager - CapacityPlanner::kCudaGraphBytes);
        QVERIFY(CapacityPlanner::cudaKvCacheBytes(total, 0.01, false, used) < 0);  // nothing left: the caller says so
    }
};

QTEST_GUILESS_MAIN(TestServingSettings)
#include "test_serving_settings.moc"
