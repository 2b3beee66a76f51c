// AutoAWQ "gemm" tensors <-> QuantizedWeight (docs/model-ernie-4.5.md section 5):
//   qweight int32 [K, N * bits / 32], values packed along N, 32 / bits per int32;
//   qzeros  int32 [K / G, N * bits / 32], packed the same way;
//   scales  fp16  [K / G, N].
// 4 bits: the eight nibbles of an int32 hold logical columns in AWQ order [0,2,4,6,1,3,5,7]
// (nibble j = (v >> 4j) & 0xF is column AWQ_ORDER[j]). 8 bits (Brook's extension; AutoAWQ's
// gemm kernels are 4-bit only): four bytes per int32 in plain order 0,1,2,3.
#pragma once

#include "engine/quantized_weight.h"
#include "engine/result.h"
#include "engine/tensor_view.h"

#include <cstdint>
#include <string>
#include <vector>

namespace brook {

struct AwqTensors {
    int rows = 0;                  // N
    int cols = 0;                  // K
    std::vector<int32_t> qweight;  // [K, N * bits / 32]
    std::vector<int32_t> qzeros;   // [K / G, N * bits / 32]
    std::vector<uint16_t> scales;  // [K / G, N], fp16 bits
};

// `name` is the Linear's prefix (e.g. "model.layers.0.self_attn.q_proj"), for error messages;
// shapes and dtypes (I32, I32, F16) are checked against N, K, bits and groupSize.
Result<QuantizedWeight> fromAwqGemm(const TensorView& qweight, const TensorView& qzeros, const TensorView& scales,
                                    int rows, int cols, int bits, int groupSize, const std::string& name);

// The same, from tensors held in memory (brook-quantize's output, tests); shapes are checked
// against t.rows / t.cols.
Result<QuantizedWeight> fromAwqGemm(const AwqTensors& t, int bits, int groupSize, const std::string& name);

// w.rows must be a multiple of 32 / w.bits (8 for 4 bits, 4 for 8 bits).
AwqTensors toAwqGemm(const QuantizedWeight& w);

}  // namespace brook
