// GpuSampler: samples the next token of every row of a device fp32 logits matrix on the GPU,
// with the CPU Sampler's semantics (penalties, min_tokens mask, raw-logit logprobs and top-N,
// greedy / temperature / top-k / top-p / min-p, seeded draw from Sampler::uniform(seed, step)),
// so full logits never cross to the host: only (token, logprob, top-N) per row come back.
// The same token as Sampler::sample for the same row and context, bit for bit (both follow the
// draw defined in engine/sampler.cpp); logprobs agree to ~1e-5. Per call: one upload of the
// packed row parameters and penalty edits, one kernel (gpu_sampler_kernel.cu), one download,
// then a stream synchronize. Engine thread only (one stream).
#pragma once

#include "cuda/device_buffer.h"
#include "engine/sampler.h"

#include <cuda_runtime.h>

#include <memory>
#include <span>
#include <vector>

namespace brook::cuda {

class GpuSampler {
public:
    // Holds a [maxRows, V] uint32 scratch (4 * maxRows * V bytes) besides small buffers.
    GpuSampler(int maxRows, int vocabSize);
    ~GpuSampler();

    // logits: device [rows, V] fp32, modified in place (penalties, masks, as the CPU Sampler
    // does). contexts: one per row, rows <= maxRows. Returns when the results are on the host.
    std::vector<SampleResult> sample(float* logits, std::span<const SamplingContext> contexts, cudaStream_t stream);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace brook::cuda
