// ModelConfig: the dimensions of an ERNIE-4.5 dense model, read from its config.json.
// Every dimension comes from the file; none is assumed (missing required keys are errors).
#pragma once

#include "engine/quantization_config.h"
#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace brook {

struct ModelConfig {
    std::string architecture;  // "Ernie4_5ForCausalLM" or "Ernie4_5_ForCausalLM"
    std::string modelType;     // "ernie4_5"
    int vocabSize = 0;         // V
    int hiddenSize = 0;        // H
    int intermediateSize = 0;  // FFN width
    int numLayers = 0;         // L
    int numHeads = 0;          // NH
    int numKvHeads = 0;        // KVH
    int headDim = 0;           // HD (config "head_dim", else H / NH)
    int maxPositionEmbeddings = 0;
    double rmsNormEps = 1e-5;
    double ropeTheta = 10000.0;  // "rope_theta" or transformers 5's "rope_parameters.rope_theta"
    bool tieWordEmbeddings = true;
    bool useBias = false;
    int bosTokenId = -1;
    int eosTokenId = -1;
    int padTokenId = -1;
    std::string torchDtype;  // "bfloat16", "float16", "float32" or empty
    // Set for a pre-quantized (AutoAWQ gemm) checkpoint: its Linear weights are
    // .qweight/.qzeros/.scales instead of .weight.
    std::optional<QuantizationConfig> quantization;

    int qDim() const { return numHeads * headDim; }     // width of q_proj's output
    int kvDim() const { return numKvHeads * headDim; }  // width of k_proj / v_proj's output
    int groupSize() const { return numHeads / numKvHeads; }
    // Bytes of KV cache per token for an element size (2 for bf16/fp16, 4 for fp32).
    int64_t kvBytesPerToken(int elementBytes) const { return int64_t(numLayers) * 2 * kvDim() * elementBytes; }
};

// Parses config.json text. `sourceName` names the file in error messages.
Result<ModelConfig> parseModelConfig(std::string_view json, const std::string& sourceName);
Result<ModelConfig> loadModelConfig(const std::filesystem::path& configJson);

}  // namespace brook
