// QuantizationConfig: config.json's "quantization_config" of a pre-quantized checkpoint.
// Brook reads AutoAWQ's keys (quant_method, bits or w_bit, group_size or q_group_size,
// zero_point, version) and supports AWQ "gemm" tensors only (docs/model-ernie-4.5.md section 5).
#pragma once

#include "engine/result.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace brook {

struct QuantizationConfig {
    std::string method;     // "awq"
    int bits = 4;           // 4 (AutoAWQ) or 8 (Brook's extension, brook-quantize)
    int groupSize = 128;    // along K
    bool zeroPoint = true;  // asymmetric groups; Brook supports only these
    std::string version;    // "gemm" (missing reads as "gemm")
};

// `value` is the quantization_config object; errors name `sourceName` (config.json) and the key.
Result<QuantizationConfig> parseQuantizationConfig(const nlohmann::json& value, const std::string& sourceName);

}  // namespace brook
