// The scalar definitions behind cpu/sampler_kernels.h: the references every vector path matches bit
// for bit (tests/engine/test_cpu_sampler_kernels.cpp), and the tails of those paths. Internal to
// src/engine/cpu.
#pragma once

#include "engine/cpu/sampler_kernels.h"
#include "engine/sampler_math.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace brook::cpu::sampler_scalar {

inline void probRowScalar(const float* logits, size_t V, float temperature, float maxScaled, uint32_t* probs)
{
    for (size_t i = 0; i < V; ++i) probs[i] = samplerProbBits(logits[i] / temperature - maxScaled);
}

inline size_t buildKeysScalar(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* keys,
                              uint64_t* mass)
{
    size_t count = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < V; ++i) {
        const uint32_t p = probs[i];
        keys[count] = (uint64_t(p) << 32) | uint32_t(~uint32_t(i));
        count += p >= minBits;
        total += samplerWeight(p, shift);
    }
    *mass = total;
    return count;
}

inline uint64_t bucketMassesScalar(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* masses,
                                   size_t* candidates)
{
    const uint32_t base = minBits >> kProbBucketShift;
    const size_t last = probBucketCount(minBits) - 1;
    size_t count = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < V; ++i) {
        const uint32_t p = probs[i];
        if (p < minBits) continue;  // weight 0
        const uint64_t w = samplerWeight(p, shift);
        total += w;
        ++count;
        if (masses) masses[std::min(size_t((p >> kProbBucketShift) - base), last)] += w;
    }
    *candidates = count;
    return total;
}

inline size_t keysInBucketScalar(const uint32_t* probs, size_t V, uint32_t bucketBits, uint64_t* keys)
{
    size_t count = 0;
    for (size_t i = 0; i < V; ++i) {
        const uint32_t p = probs[i];
        keys[count] = (uint64_t(p) << 32) | uint32_t(~uint32_t(i));
        count += (p >> kProbBucketShift) == bucketBits;
    }
    return count;
}

// Continues the draw's walk from index `begin` with running mass `cumulative`; `last` is the last
// kept index before `begin`. Returns the token, or -1 (with cumulative / last updated) if the walk
// reached `end` without crossing.
inline int32_t drawScalar(const uint32_t* probs, size_t begin, size_t end, uint32_t minBits, uint64_t floor, int shift,
                          double target, uint64_t& cumulative, int32_t& last)
{
    for (size_t i = begin; i < end; ++i) {
        const uint32_t p = probs[i];
        if (p < minBits || ((uint64_t(p) << 32) | uint32_t(~uint32_t(i))) < floor) continue;
        cumulative += samplerWeight(p, shift);
        last = int32_t(i);
        if (double(cumulative) > target) return last;
    }
    return -1;
}

// A scalar tail numbers its tokens from 0: renumber its n keys from `first`.
inline void rebaseKeys(uint64_t* keys, size_t n, size_t first)
{
    for (size_t k = 0; k < n; ++k) {
        const uint32_t token = ~uint32_t(keys[k]) + uint32_t(first);
        keys[k] = (keys[k] & 0xFFFFFFFF00000000ull) | uint32_t(~token);
    }
}

inline float maxScalar(const float* values, size_t n)
{
    float m = -INFINITY;
    for (size_t i = 0; i < n; ++i)
        if (values[i] > m) m = values[i];
    return m;
}

}  // namespace brook::cpu::sampler_scalar
