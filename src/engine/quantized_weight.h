// QuantizedWeight: one Linear's weight [N out, K in] in 4 or 8 bits with asymmetric groups of
// `groupSize` along K: w[n][k] = (q[n][k] - zero[n][g]) * scale[n][g], g = k / groupSize.
// This is Brook's one in-memory layout, whatever the source (an AutoAWQ "gemm" checkpoint,
// brook-quantize's output, or --quantization int4|int8 at load): rows along K so that a decode
// GEMV streams each output row with 16-byte loads, and fused weights (q|k|v, gate|up) are
// plain row concatenations. The CPU backend dequantizes it; the CUDA kernels read it as is.
//
// Packing of `packed`, row-major [N][K * bits / 8]:
//   bits 8: byte k of a row is q[n][k] (0..255).
//   bits 4: byte j of a row holds k = 2j in its low nibble and k = 2j + 1 in its high nibble.
// Scales are floats that are exactly representable in fp16 (AWQ stores fp16; RTN rounds to
// fp16 when it quantizes), so a GPU copy in fp16 dequantizes to the very same values.
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <span>
#include <vector>

namespace brook {

struct QuantizedWeight {
    int bits = 4;                 // 4 or 8
    int groupSize = 128;          // along K; divides K
    int rows = 0;                 // N: output features
    int cols = 0;                 // K: input features
    std::vector<uint8_t> packed;  // [N][K * bits / 8]
    std::vector<float> scales;    // [N][K / groupSize], fp16-exact
    std::vector<uint8_t> zeros;   // [N][K / groupSize], 0 .. 2^bits - 1

    int groupsPerRow() const { return cols / groupSize; }
    int64_t packedRowBytes() const { return int64_t(cols) * bits / 8; }
    uint8_t code(int n, int k) const;  // q[n][k]
    float value(int n, int k) const;   // the dequantized weight
    // Bytes this weight takes on a GPU: packed + fp16 scales + one byte per zero.
    int64_t deviceBytes() const;

    // A [rows, cols] weight with every code, scale and zero 0, sized for filling in.
    static QuantizedWeight zeroed(int bits, int groupSize, int rows, int cols);
};

// Round-to-nearest, asymmetric min/max per group; scales rounded to fp16 first, then codes
// chosen against the rounded scale. w: [N, K] row-major fp32.
Result<QuantizedWeight> quantizeRtn(std::span<const float> w, int rows, int cols, int bits, int groupSize);

// out: [N, K] row-major fp32.
void dequantize(const QuantizedWeight& w, std::span<float> out);

// Row-wise concatenation (the fused q|k|v and gate|up); all parts share bits, groupSize, cols.
Result<QuantizedWeight> concatRows(std::span<const QuantizedWeight> parts);

}  // namespace brook
