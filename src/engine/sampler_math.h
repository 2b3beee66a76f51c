// The arithmetic of a sampling draw, shared by the CPU Sampler and the CUDA GpuSampler so that
// both compute bit-identical probabilities and masses for the same logits row (the GPU must pick
// the very token the CPU picks). Only integer arithmetic and single IEEE float operations, which
// round identically everywhere; no libm, whose expf differs between glibc and CUDA by an ulp,
// enough to swap near-tied tokens in the candidate order.
//   p = samplerProbBits(x): e^x for x <= 0 as float bits, within 1 ulp (0 below e^-87).
//   w = samplerWeight(p, shift): floor(p * 2^shift), the exact integer mass of a token, with
//       shift = samplerWeightShift(V) so that V weights sum below 2^63.
#pragma once

#include <cstdint>
#include <cstring>

// Also compiled by nvcc (C++17) for GpuSampler's kernel.
#ifdef __CUDACC__
#define BROOK_HOST_DEVICE __host__ __device__
#else
#define BROOK_HOST_DEVICE
#endif

namespace brook {

BROOK_HOST_DEVICE inline uint32_t floatBits(float value)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(value);
#else
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
#endif
}

BROOK_HOST_DEVICE inline float bitsFloat(uint32_t bits)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(bits);
#else
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
#endif
}

BROOK_HOST_DEVICE inline uint32_t mulHi32(uint32_t a, uint32_t b)
{
    return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}

// Any float to a uint32 whose order is the float order; NaN maps to 0, below everything.
BROOK_HOST_DEVICE inline uint32_t orderedFloatBits(float value)
{
    const uint32_t bits = floatBits(value);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0;  // NaN
    return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

// e^x for x <= 0 (x > 0 is treated as 0) as the bits of a float in (0, 1]; 0 when x <= -87 or
// NaN. Computed as 2^-y with y = -x * log2(e) in 32.31 fixed point, 2^-frac(y) by an 11-term
// alternating series in 0.32 fixed point (truncation < 2^-35), one correctly rounded int-to-float
// conversion and an exponent shift. Monotone; |error| <= 1 ulp (98% correctly rounded).
BROOK_HOST_DEVICE inline uint32_t samplerProbBits(float x)
{
    if (!(x > -87.0f)) return 0;          // also -inf and NaN
    if (!(x < 0.0f)) return 0x3F800000u;  // e^0 = 1
    // -x * 2^32 is exact in float; the conversion truncates (|x| < 2^-32 counts as 0).
    const auto fixedX = static_cast<uint64_t>(-x * 4294967296.0f);  // |x| in 32.32
    constexpr uint32_t kLog2eQ31 = 3098164009u;                     // round(log2(e) * 2^31)
    const uint64_t y = (fixedX >> 32) * kLog2eQ31 + mulHi32(static_cast<uint32_t>(fixedX), kLog2eQ31);
    const auto whole = static_cast<uint32_t>(y >> 31);  // <= 125
    const auto frac = static_cast<uint32_t>(y << 1);    // 0.32
    // 2^-f = 1 - f (c1 - f (c2 - f (c3 - ...))), c_k = ln(2)^k / k! in 0.32; every partial
    // value stays positive because c_{k+1} < c_k.
    uint32_t q = 2u;  // c11
    q = 30u - mulHi32(frac, q);
    q = 437u - mulHi32(frac, q);
    q = 5676u - mulHi32(frac, q);
    q = 65510u - mulHi32(frac, q);
    q = 661577u - mulHi32(frac, q);
    q = 5726720u - mulHi32(frac, q);
    q = 41309550u - mulHi32(frac, q);
    q = 238388332u - mulHi32(frac, q);
    q = 1031764991u - mulHi32(frac, q);
    q = 2977044472u - mulHi32(frac, q);                                       // c1
    const uint64_t mantissa = (uint64_t{1} << 32) - mulHi32(frac, q);         // 2^-f in 0.32, in [2^31, 2^32]
    const auto rounded = static_cast<float>(static_cast<int64_t>(mantissa));  // correctly rounded
    return floatBits(rounded) - ((32u + whole) << 23);                        // * 2^-(32 + whole): stays a normal float
}

// The shift that keeps V weights (each <= 2^shift) below 2^63: 63 - bit_width(V).
inline int samplerWeightShift(int vocab)
{
    int width = 0;
    for (auto v = static_cast<uint32_t>(vocab > 0 ? vocab : 1); v; v >>= 1) ++width;
    return 63 - width;
}

// floor(p * 2^shift) for the float with bits `probBits` (positive or zero).
BROOK_HOST_DEVICE inline uint64_t samplerWeight(uint32_t probBits, int shift)
{
    const int exponentField = static_cast<int>(probBits >> 23);
    if (exponentField == 0) return 0;  // zero (the sampler never makes subnormals)
    const uint64_t mantissa = (probBits & 0x7FFFFFu) | 0x800000u;
    const int scale = exponentField - 127 - 23 + shift;
    if (scale >= 0) return mantissa << scale;
    return scale > -64 ? mantissa >> -scale : 0;
}

}  // namespace brook
