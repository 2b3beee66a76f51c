// The GPU sampling kernel's interface: the packed per-row inputs GpuSampler uploads, the per-row
// results it reads back, and the launcher. One CTA or one cluster per row; see gpu_sampler_kernel.cu for the
// algorithm and engine/sampler.cpp for the definition it reproduces.
// Letters: R rows, V vocabulary, E edits (all rows).
// Compiled as C++17 by nvcc: includes nothing of the engine beyond engine/sampler_math.h.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace brook::cuda {

inline constexpr int kGpuMaxTopLogprobs = 20;  // == brook::kMaxLogprobs (checked in gpu_sampler.cpp)

// What GpuSampler does to one logit before sampling (the CPU's penalties and min_tokens mask,
// applied in this order). Each token appears at most once in a row's edits.
enum GpuEditOp : uint32_t {
    kEditRepetition = 1u,  // x > 0 ? x / r : x * r
    kEditSubtract = 2u,    // x -= delta (frequency * count + presence, computed on the host)
    kEditMask = 4u,        // x = -inf
};

struct GpuSampleEdit {
    int32_t token = 0;
    uint32_t ops = 0;  // GpuEditOp bits
    float delta = 0.0f;
    float raw = 0.0f;  // written by the kernel: the logit before the edit (for logprobs)
};

struct GpuSampleRow {
    double u = 0.0;  // Sampler::uniform(seed, step); unused when greedy
    float temperature = 1.0f;
    float topP = 1.0f;
    float minP = 0.0f;
    float repetitionPenalty = 1.0f;
    int32_t topK = 0;
    int32_t greedy = 0;     // 1: argmax of the edited logits
    int32_t logprobs = -1;  // -1: none; else top-N (N <= kGpuMaxTopLogprobs)
    int32_t editBegin = 0;  // this row's edits: edits[editBegin, editBegin + editCount)
    int32_t editCount = 0;
    int32_t pad = 0;
};
static_assert(sizeof(GpuSampleRow) == 48, "GpuSampleRow is uploaded as is");

struct GpuSampleOut {
    int32_t token = 0;
    float logprob = 0.0f;
    int32_t topCount = 0;
    int32_t pad = 0;
    int32_t topTokens[kGpuMaxTopLogprobs] = {};
    float topLogprobs[kGpuMaxTopLogprobs] = {};
};

// logits [R, V] (modified in place: edits), scratch [R, V] (probability bits of the draw),
// rows [R], edits [E] (raw written back), out [R]. weightShift = samplerWeightShift(V).
void launch_gpu_sample(float* logits, uint32_t* scratch, const GpuSampleRow* rows, GpuSampleEdit* edits,
                       GpuSampleOut* out, int R, int V, int weightShift, cudaStream_t stream);
// CTAs per row that launch uses for R rows: 1, or a thread-block cluster of up to 8 where the
// GPU has clusters and the batch leaves SMs idle (CudaFeatures::samplerClusterSize forces one).
int gpu_sample_cluster_size(int R);

}  // namespace brook::cuda
