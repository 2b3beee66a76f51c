#include "engine/rope_frequencies.h"

#include <cmath>

namespace brook {

std::vector<float> ropeInverseFrequencies(double theta, int headDim)
{
    std::vector<float> invFreq(size_t(headDim / 2));
    // torch: 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), every step a float32 op.
    const float base = float(theta);
    for (size_t i = 0; i < invFreq.size(); ++i) {
        const float exponent = float(2 * i) / float(headDim);
        invFreq[i] = 1.0f / std::pow(base, exponent);
    }
    return invFreq;
}

}  // namespace brook
