#include "cuda/load_plan.h"

#include "cuda/gemm_rows.h"

#include <algorithm>
#include <cstdint>

namespace brook::cuda {

std::vector<int> decodeGraphBuckets(int maxSeqs)
{
    std::vector<int> buckets;
    for (int b : {1, 2, 4, 8})
        if (b <= maxSeqs) buckets.push_back(b);
    for (int b = 16; b <= maxSeqs; b += 8) buckets.push_back(b);
    if (buckets.empty() || buckets.back() != maxSeqs) buckets.push_back(maxSeqs);
    return buckets;
}

std::vector<int> prefillGraphBuckets(int maxTokens)
{
    std::vector<int> buckets;
    const int last = std::min(kMaxPrefillGraphTokens, maxTokens);
    for (int b = gemmPaddedRows(2); b <= last; b = gemmPaddedRows(b + 1)) buckets.push_back(b);
    return buckets;
}

CudaLoadPlan planCudaLoad(StepLimits limits, int maxModelLen, bool cudaGraphs, bool prefillGraphs)
{
    const StepShape capacity = stepCapacity(limits);
    CudaLoadPlan plan;
    // The profile fills a step's whole token budget with sequences of up to max_model_len tokens,
    // as many as max_num_seqs allows, so it measures the largest activations a step can need.
    const int seqLen = std::max(1, std::min(capacity.tokens, maxModelLen));
    for (int left = capacity.tokens; left > 0 && int(plan.profileSequences.size()) < capacity.sampled;) {
        const int n = std::min(left, seqLen);
        plan.profileSequences.push_back(n);
        left -= n;
    }
    if (cudaGraphs) {
        plan.decodeGraphs = decodeGraphBuckets(capacity.sampled);
        if (prefillGraphs) plan.prefillGraphs = prefillGraphBuckets(capacity.tokens);
    }
    return plan;
}

std::vector<StepShape> CudaLoadPlan::stepShapes() const
{
    std::vector<StepShape> shapes;
    std::vector<int32_t> tokens;
    for (int n : profileSequences) tokens.resize(std::max(tokens.size(), size_t(n)));
    std::vector<BatchSequence> profile;
    for (int n : profileSequences)
        profile.push_back({std::span<const int32_t>(tokens.data(), size_t(n)), 0, {}, true, {}});
    if (!profile.empty()) shapes.push_back(stepShape(profile, 0, 0));
    for (int bucket : decodeGraphs) shapes.push_back(stepShape({}, bucket, 0));
    for (int bucket : prefillGraphs) shapes.push_back(stepShape({}, 0, bucket));
    return shapes;
}

}  // namespace brook::cuda
