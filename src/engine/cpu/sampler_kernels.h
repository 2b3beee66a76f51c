// The two passes over the whole vocabulary in Sampler's draw, vectorized (AVX-512 F+DQ, or AVX2) with
// bit-identical results to the scalar definitions in engine/sampler_math.h: the same integer
// and single IEEE float operations per lane, so a seeded request picks the very same token.
//   probRow:   probs[i] = samplerProbBits(logits[i] / temperature - maxScaled)
//   buildKeys: the candidate keys (probs[i] >= minBits) in index order, and the total mass
//              sum_i samplerWeight(probs[i], shift) (an exact integer sum: order-free).
//   bucketMasses: the top-p cut's first level without keys: the candidates' mass per bucket of
//              probability bits (bits >> kProbBucketShift, 32 buckets an octave), and the
//              total mass; keysInBucket: the keys of one bucket's tokens, in index order.
//   drawIndex: the draw's walk in index order over the kept tokens (p >= minBits and key >=
//              floor): the first whose running mass C has double(C) > target, else the last kept.
// The scalar versions (sampler_kernels_scalar.h) are the references
// (tests/engine/test_cpu_sampler_kernels.cpp); the AVX2 ones are in sampler_kernels_avx2.cpp.
// Stateless; thread-safe.
#pragma once

#include "engine/cpu/cpu_features.h"

#include <cstddef>
#include <cstdint>

namespace brook::cpu {

// True when this CPU (and BROOK_CPU_ISA) allows vector versions (AVX-512 F+DQ or AVX2).
bool samplerKernelsVectorized(CpuIsa isa);

void probRow(const float* logits, size_t V, float temperature, float maxScaled, uint32_t* probs, CpuIsa isa);
// keys: room for V. Returns the number of keys written; *mass gets the total mass of all tokens.
size_t buildKeys(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* keys, uint64_t* mass,
                 CpuIsa isa);

// Buckets of probability bits for the top-p cut. Every candidate's bits lie in [minBits,
// bits(1.0f)] (probRow never gives more than 1), and minBits = bits(2^-shift) has a zero mantissa,
// so bucket b = (bits >> kProbBucketShift) - (minBits >> kProbBucketShift) counts from 0.
inline constexpr int kProbBucketShift = 18;
inline constexpr uint32_t kProbOneBits = 0x3F800000u;
inline size_t probBucketCount(uint32_t minBits)
{
    return size_t((kProbOneBits >> kProbBucketShift) - (minBits >> kProbBucketShift)) + 1;
}
// Adds each candidate's samplerWeight into masses[its bucket] (probBucketCount(minBits) entries,
// zeroed by the caller; null: totals only). Returns the total mass of all tokens (what buildKeys
// gives) and sets *candidates to the number of tokens with probs[i] >= minBits.
uint64_t bucketMasses(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* masses,
                      size_t* candidates, CpuIsa isa);
// keys: room for V. The keys (as buildKeys makes them) of the tokens with bits >> kProbBucketShift
// == bucketBits, in index order; returns their number.
size_t keysInBucket(const uint32_t* probs, size_t V, uint32_t bucketBits, uint64_t* keys, CpuIsa isa);

// The largest value by `>` (NaN never wins; -inf when all are NaN or -inf), as the scalar loop
// `if (x > m) m = x` from m = -inf finds it (only the sign of a zero maximum may differ, which no
// caller can see: it is subtracted from every value).
float maxValue(const float* values, size_t n, CpuIsa isa);

int32_t drawIndex(const uint32_t* probs, size_t V, uint32_t minBits, uint64_t floor, int shift, double target,
                  CpuIsa isa);

}  // namespace brook::cpu
