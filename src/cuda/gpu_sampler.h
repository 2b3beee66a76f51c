// GpuSampler: samples the next token of every row of a device fp32 logits matrix on the GPU,
// with the CPU Sampler's semantics (penalties, min_tokens mask, raw-logit logprobs and top-N,
// greedy / temperature / top-k / top-p / min-p, seeded draw from Sampler::uniform(seed, step)),
// so full logits never cross to the host: only (token, logprob, top-N) per row come back.
// Engine thread only (one stream).
#pragma once

#include "cuda/device_buffer.h"
#include "engine/sampler.h"

#include <cuda_runtime.h>

#include <span>
#include <vector>

namespace brook::cuda {

class GpuSampler {
public:
    GpuSampler(int maxRows, int vocabSize);
    ~GpuSampler();

    // logits: device [rows, V] fp32, modified in place. contexts: one per row.
    std::vector<SampleResult> sample(float* logits, std::span<const SamplingContext> contexts, cudaStream_t stream);

private:
    struct Impl;
    Impl* m_impl;
};

} // namespace brook::cuda
