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

}  // namespace brook
