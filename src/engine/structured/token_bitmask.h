// applyTokenBitmask: sets the logits of the tokens a structured-output mask forbids to -inf.
// The mask is [ceil(V / 32)] words, bit t % 32 of word t / 32 set = token t allowed. The CPU
// sampler's step and the reference the GPU kernel (cuda/token_mask_kernel.cu) is checked against.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>

namespace brook::structured {

inline void applyTokenBitmask(std::span<float> logits, std::span<const uint32_t> mask)
{
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const size_t vocab = logits.size();
    for (size_t w = 0; w < mask.size() && w * 32 < vocab; ++w) {
        const uint32_t bits = mask[w];
        if (bits == ~0u) continue;  // all allowed: most words inside a JSON string
        const size_t end = std::min(vocab, w * 32 + 32);
        if (bits == 0) {  // all forbidden: most words between JSON tokens
            std::fill(logits.begin() + std::ptrdiff_t(w * 32), logits.begin() + std::ptrdiff_t(end), kNegInf);
            continue;
        }
        for (size_t t = w * 32; t < end; ++t)
            if (!((bits >> (t - w * 32)) & 1u)) logits[t] = kNegInf;
    }
    for (size_t t = mask.size() * 32; t < vocab; ++t) logits[t] = kNegInf;  // past the mask: forbidden
}

}  // namespace brook::structured
