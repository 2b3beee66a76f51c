// RoPE's inverse frequencies, computed exactly as transformers computes them.
//
// Why this exact arithmetic: transformers builds inv_freq in float32 (the exponent 2i/d in fp32,
// then an fp32 pow, then an fp32 reciprocal), so two of its roundings land on the result. Taking
// the whole expression in double and rounding once gives a different float for 18 of ERNIE-0.3B's
// 64 frequencies (one ulp), and at position 1,023 one ulp of the fastest of them moves the angle by
// 6e-5 radians: enough to put the exact mode (--dtype float32) twice over its 1e-4 logprob bound
// at long prefixes (docs/benchmarks.md). Every backend takes its frequencies from here.
#pragma once

#include <vector>

namespace brook {

// config.json's rope_scaling of type "llama3" (Llama 3.1 and 3.2): long wavelengths slowed by
// `factor`, short ones kept, the band between blended.
struct Llama3RopeScaling {
    double factor = 8.0;
    double lowFreqFactor = 1.0;
    double highFreqFactor = 4.0;
    int originalMaxPositions = 8192;
};

// inv_freq[i] = 1 / theta^(2i / headDim) for i in [0, headDim / 2), in transformers' float32 steps.
std::vector<float> ropeInverseFrequencies(double theta, int headDim);
// The same, then rescaled as transformers' _compute_llama3_parameters does (in float32).
std::vector<float> ropeInverseFrequencies(double theta, int headDim, const Llama3RopeScaling& scaling);

}  // namespace brook
