// Loading the Linear weights of an ERNIE layer as QuantizedWeight, whatever the source:
//  - an AutoAWQ "gemm" checkpoint (config.json quantization_config quant_method "awq"):
//    <name>.qweight / .qzeros / .scales unpacked into Brook's layout (quantized_weight.h);
//  - a dense checkpoint with --quantization int4|int8: round-to-nearest at load, group 128.
// Both backends call this; the CPU backend then dequantizes, the CUDA backend uploads as is.
#pragma once

#include "engine/checkpoint.h"
#include "engine/model_config.h"
#include "engine/quantized_weight.h"
#include "engine/result.h"

#include <string>

namespace brook {

struct QuantizationSpec {
    int bits = 0;  // 0: dense (no quantization); else 4 or 8
    int groupSize = 128;
    bool fromCheckpoint = false;  // true: the checkpoint holds AWQ tensors; false: RTN at load
    bool enabled() const { return bits != 0; }
    std::string describe() const;  // e.g. "awq 4-bit, group 128" or "int8 (RTN at load), group 128"
};

// Combines config.json's quantization_config with the --quantization flag ("", int4, int8, awq):
// "awq" requires an AWQ checkpoint; int4/int8 on an AWQ checkpoint is an error naming both;
// "" on an AWQ checkpoint uses the checkpoint's quantization.
Result<QuantizationSpec> resolveQuantization(const ModelConfig& config, const std::string& flag);

// The fused Linear weights of one layer (q|k|v rows, o, gate|up rows, down).
struct QuantizedLayer {
    QuantizedWeight qkv;
    QuantizedWeight o;
    QuantizedWeight gateUp;
    QuantizedWeight down;
};

// spec.enabled() must be true. Errors name the tensor and the folder.
Result<QuantizedLayer> loadQuantizedLayer(const Checkpoint& checkpoint, const ModelConfig& config, int layer,
                                          const QuantizationSpec& spec);

}  // namespace brook
