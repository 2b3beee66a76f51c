#include "engine/rope_frequencies.h"

#include <cmath>

namespace brook {

std::vector<float> ropeInverseFrequencies(double theta, int headDim)
{
    std::vector<float> invFreq(size_t(headDim / 2));
    // torch: 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), every step a float32 op.
    // Its float32 pow (SLEEF, within 1 ulp) is taken here correctly rounded: the same float for
    // 287 of the 288 frequencies test_rope_frequencies checks, one ulp off for the other.
    const double base = double(float(theta));
    for (size_t i = 0; i < invFreq.size(); ++i) {
        const float exponent = float(2 * i) / float(headDim);
        const float power = float(std::pow(base, double(exponent)));
        invFreq[i] = 1.0f / power;
    }
    return invFreq;
}

std::vector<float> ropeInverseFrequencies(double theta, int headDim, const Llama3RopeScaling& scaling)
{
    std::vector<float> invFreq = ropeInverseFrequencies(theta, headDim);
    // transformers' _compute_llama3_parameters on the float32 tensor: each Python number meets the
    // tensor as a float32, so every step below is a float op, in the order torch evaluates it.
    const float factor = float(scaling.factor);
    const float lowFactor = float(scaling.lowFreqFactor);
    const float oldContext = float(scaling.originalMaxPositions);
    const float lowFreqWavelen = float(double(scaling.originalMaxPositions) / scaling.lowFreqFactor);
    const float highFreqWavelen = float(double(scaling.originalMaxPositions) / scaling.highFreqFactor);
    const float band = float(scaling.highFreqFactor - scaling.lowFreqFactor);
    const float twoPi = float(2 * 3.14159265358979323846);
    for (float& f : invFreq) {
        const float wavelen = twoPi / f;
        // Wavelengths longer than the original context are slowed by the factor; shorter than
        // its high-frequency share are kept; between, the two are blended.
        const float scaled = wavelen > lowFreqWavelen ? f / factor : f;
        const bool medium = !(wavelen < highFreqWavelen) && !(wavelen > lowFreqWavelen);
        if (!medium) {
            f = scaled;
            continue;
        }
        const float smooth = (oldContext / wavelen - lowFactor) / band;
        const float slow = (1.0f - smooth) * scaled;
        const float fast = smooth * scaled;
        f = slow / factor + fast;
    }
    return invFreq;
}

}  // namespace brook
