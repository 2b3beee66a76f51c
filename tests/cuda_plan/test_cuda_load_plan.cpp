// The CUDA backend's load plan (src/cuda/load_plan.h) against the engine's limits, without a GPU:
// every forward the load runs (the profile, each graph's warm-up and capture) and every step a
// request can make must fit the buffers StepInputs allocates for --max-num-seqs and
// --max-num-batched-tokens. --max-num-seqs 1 once failed every load on a GPU ("step of 16
// tokens / 2 sequences exceeds the preallocated 8192 / 1"): the prefill graphs' layout has a
// padding sequence that the buffers had no room for.
#include "cuda/gemm_rows.h"
#include "cuda/load_plan.h"
#include "cuda/step_layout.h"

#include <QTest>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

using namespace brook;
using namespace brook::cuda;

namespace {

std::string describe(StepLimits limits, int maxModelLen, const StepShape& shape, const StepShape& capacity)
{
    return "max_num_seqs " + std::to_string(limits.maxNumSeqs) + ", max_num_batched_tokens " +
           std::to_string(limits.maxNumBatchedTokens) + ", max_model_len " + std::to_string(maxModelLen) + ": " +
           std::to_string(shape.tokens) + " tokens / " + std::to_string(shape.seqs) + " sequences / " +
           std::to_string(shape.sampled) + " sampled, capacity " + std::to_string(capacity.tokens) + " / " +
           std::to_string(capacity.seqs) + " / " + std::to_string(capacity.sampled);
}

// The smallest bucket >= n, or 0 (ForwardGraphs' lookup).
int bucketFor(const std::vector<int>& buckets, int n)
{
    auto it = std::lower_bound(buckets.begin(), buckets.end(), n);
    return it == buckets.end() ? 0 : *it;
}

}  // namespace

class TestCudaLoadPlan : public QObject {
    Q_OBJECT
private slots:
    void everyLoadStepFitsTheLimits()
    {
        int plans = 0;
        for (int seqs = 1; seqs <= 4; ++seqs)
            for (int tokens = 16; tokens <= 8192; ++tokens)
                for (int maxModelLen : {256, 4096})
                    for (bool graphs : {true, false}) {
                        const StepLimits limits{tokens, seqs};
                        const StepShape capacity = stepCapacity(limits);
                        const CudaLoadPlan plan = planCudaLoad(limits, maxModelLen, graphs, true);
                        ++plans;
                        // Nothing at load asks for more real sequences or tokens than the engine allows.
                        QVERIFY(!plan.profileSequences.empty());
                        QVERIFY(int(plan.profileSequences.size()) <= seqs);
                        QVERIFY(std::accumulate(plan.profileSequences.begin(), plan.profileSequences.end(), 0) <=
                                std::max(tokens, seqs));
                        for (int bucket : plan.decodeGraphs) QVERIFY(bucket <= seqs);
                        for (int bucket : plan.prefillGraphs) QVERIFY(bucket <= tokens);
                        // And each of its steps, as StepInputs lays it out, fits the buffers.
                        for (const StepShape& shape : plan.stepShapes())
                            if (!fits(shape, capacity) || shape.sampled > seqs)
                                QFAIL(describe(limits, maxModelLen, shape, capacity).c_str());
                    }
        QCOMPARE(plans, 4 * (8192 - 16 + 1) * 2 * 2);
    }

    // The steps requests make after the load, within the same limits, fit as well: a prefill of
    // one sequence (through its prefill graph when one serves it), a decode of up to
    // max_num_seqs sequences (padded to its decode graph), a chunk shared by every sequence.
    void everyRequestStepFitsTheLimits()
    {
        std::vector<int32_t> ids(8192, 1);
        for (int seqs = 1; seqs <= 4; ++seqs)
            for (int tokens : {16, 17, 64, 255, 256, 257, 1000, 2048, 8192}) {
                const StepLimits limits{tokens, seqs};
                const StepShape capacity = stepCapacity(limits);
                const CudaLoadPlan plan = planCudaLoad(limits, 4096, true, true);
                for (int n = 1; n <= tokens; ++n) {
                    const BatchSequence one{std::span<const int32_t>(ids.data(), size_t(n)), 0, {}, true, {}};
                    const int bucket = n >= 2 ? bucketFor(plan.prefillGraphs, n) : 0;
                    const StepShape shape = stepShape({&one, 1}, 0, bucket);
                    if (!fits(shape, capacity)) QFAIL(describe(limits, 4096, shape, capacity).c_str());
                }
                std::vector<BatchSequence> batch;
                for (int k = 1; k <= seqs; ++k) {
                    batch.push_back({std::span<const int32_t>(ids.data(), 1), 0, {}, true, {}});
                    const StepShape shape = stepShape(batch, bucketFor(plan.decodeGraphs, k), 0);
                    if (!fits(shape, capacity)) QFAIL(describe(limits, 4096, shape, capacity).c_str());
                }
                std::vector<BatchSequence> chunk(static_cast<size_t>(seqs));
                for (auto& b : chunk) b = {std::span<const int32_t>(ids.data(), size_t(tokens / seqs)), 0, {}, true, {}};
                const StepShape shape = stepShape(chunk, 0, 0);
                if (!fits(shape, capacity)) QFAIL(describe(limits, 4096, shape, capacity).c_str());
            }
    }

    // The profile fills the step's token budget (or max_num_seqs whole sequences), so the memory it
    // measures is the most a step can take.
    void theProfileFillsTheTokenBudget()
    {
        const CudaLoadPlan wide = planCudaLoad({8192, 256}, 2048, true, true);
        QCOMPARE(wide.profileSequences, (std::vector<int>{2048, 2048, 2048, 2048}));
        const CudaLoadPlan one = planCudaLoad({8192, 1}, 2048, true, true);
        QCOMPARE(one.profileSequences, (std::vector<int>{2048}));
        const CudaLoadPlan uneven = planCudaLoad({5000, 8}, 2048, true, true);
        QCOMPARE(uneven.profileSequences, (std::vector<int>{2048, 2048, 904}));
        // max_num_seqs above max_num_batched_tokens: a decode of every sequence still fits.
        QCOMPARE(stepCapacity({16, 64}).tokens, 64);
    }

    void graphBucketsFollowTheLimits()
    {
        QCOMPARE(decodeGraphBuckets(1), (std::vector<int>{1}));
        QCOMPARE(decodeGraphBuckets(3), (std::vector<int>{1, 2, 3}));
        QCOMPARE(decodeGraphBuckets(20), (std::vector<int>{1, 2, 4, 8, 16, 20}));
        QCOMPARE(prefillGraphBuckets(8192), (std::vector<int>{16, 32, 48, 64, 128, 192, 256}));
        QCOMPARE(prefillGraphBuckets(100), (std::vector<int>{16, 32, 48, 64}));
        QVERIFY(prefillGraphBuckets(15).empty());
        QVERIFY(planCudaLoad({8192, 4}, 4096, false, true).decodeGraphs.empty());  // --enforce-eager
        QVERIFY(planCudaLoad({8192, 4}, 4096, true, false).prefillGraphs.empty());
        QCOMPARE(gemmPaddedRows(65), 128);
        QCOMPARE(gemmPaddedRows(1025), 1280);
    }

    void aPaddedPrefillHasOneSequence()
    {
        std::vector<int32_t> ids(40, 1);
        const BatchSequence a{std::span<const int32_t>(ids.data(), 20), 0, {}, true, {}};
        const BatchSequence b{std::span<const int32_t>(ids.data(), 20), 0, {}, true, {}};
        const std::vector<BatchSequence> two{a, b};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, stepShape(two, 0, 48));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, stepShape({&a, 1}, 0, 16));  // 20 tokens, a 16-token graph
        const StepShape padded = stepShape({&a, 1}, 0, 32);
        QCOMPARE(padded.tokens, 32);
        QCOMPARE(padded.seqs, 1 + kPaddingSequences);
        QCOMPARE(padded.sampled, 1);
    }
};

QTEST_GUILESS_MAIN(TestCudaLoadPlan)
#include "test_cuda_load_plan.moc"
