// AVX2 versions of cpu/sampler_kernels.h's passes, bit-identical to the scalar definitions: the
// path of CPUs without AVX-512 (most desktops and laptops), where the scalar passes took ~1.9 ms a
// row of 103,424 logits. Internal to src/engine/cpu; call only where cpuid reports AVX2.
#pragma once

#include <cstddef>
#include <cstdint>

namespace brook::cpu::sampler_avx2 {

void probRow(const float* logits, size_t V, float temperature, float maxScaled, uint32_t* probs);
size_t buildKeys(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* keys, uint64_t* mass);
uint64_t bucketMasses(const uint32_t* probs, size_t V, uint32_t minBits, int shift, uint64_t* masses,
                      size_t* candidates);
size_t keysInBucket(const uint32_t* probs, size_t V, uint32_t bucketBits, uint64_t* keys);
float maxValue(const float* values, size_t n);
int32_t drawIndex(const uint32_t* probs, size_t V, uint32_t minBits, uint64_t floor, int shift, double target);

}  // namespace brook::cpu::sampler_avx2
