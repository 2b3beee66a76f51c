// CudaLoadPlan: every forward the CUDA backend runs while it loads, before any request: the
// profiling forward that measures activations, then one warm-up and one capture per CUDA graph
// bucket. CudaBackend::create and ForwardGraphs run exactly these, and stepShapes() gives each as
// StepInputs lays it out, so a test proves without a GPU that none asks for more than the
// engine's limits allow (--max-num-seqs 1 once failed to load: the prefill graphs' padding
// sequence did not fit). Pure C++.
#pragma once

#include "cuda/step_layout.h"

#include <vector>

namespace brook::cuda {

struct CudaLoadPlan {
    std::vector<int> profileSequences;  // tokens of each sequence of the profiling forward
    std::vector<int> decodeGraphs;      // decode graph buckets (one-token sequences each)
    std::vector<int> prefillGraphs;     // single-sequence prefill graph buckets (tokens each)

    // Every load-time step as StepInputs lays it out (the profile, then each graph's inputs).
    std::vector<StepShape> stepShapes() const;
};

// Decode buckets: 1, 2, 4, 8, then every 8 up to maxSeqs, and maxSeqs itself (vLLM's capture sizes).
std::vector<int> decodeGraphBuckets(int maxSeqs);
// Prefill graphs serve one sampled sequence of 2..kMaxPrefillGraphTokens new tokens; longer steps
// are compute-bound and launches do not matter.
inline constexpr int kMaxPrefillGraphTokens = 256;
// Prefill buckets: the GEMM row buckets (gemmPaddedRows) from 16 up to
// min(kMaxPrefillGraphTokens, maxTokens).
std::vector<int> prefillGraphBuckets(int maxTokens);

// cudaGraphs: off with --enforce-eager; prefillGraphs: CudaFeatures::prefillGraphs.
CudaLoadPlan planCudaLoad(StepLimits limits, int maxModelLen, bool cudaGraphs, bool prefillGraphs);

}  // namespace brook::cuda
