// ModelConfig: the dimensions of a dense decoder (ERNIE-4.5, Qwen3, Llama 3), read from its
// config.json. Every dimension comes from the file; none is assumed (missing required keys are
// errors). What differs between the families beyond dimensions is in `family`.
#pragma once

#include "engine/quantization_config.h"
#include "engine/result.h"
#include "engine/rope_frequencies.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace brook {

struct ModelFamily;  // engine/models/model_family.h

struct ModelConfig {
    std::string architecture;  // architectures[0]: "Ernie4_5ForCausalLM", "Qwen3ForCausalLM", ...
    const ModelFamily* family = nullptr;  // never null in a parsed config
    std::string modelType;     // "ernie4_5", "qwen3", "llama"
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
    std::optional<Llama3RopeScaling> llama3RopeScaling;  // rope_scaling of type "llama3"
    bool tieWordEmbeddings = true;
    int bosTokenId = -1;
    int eosTokenId = -1;            // the first of eos_token_id
    std::vector<int> eosTokenIds;  // all of eos_token_id (a list in Llama 3's config)
    int padTokenId = -1;
    std::string torchDtype;  // "bfloat16", "float16", "float32" or empty
    // Set for a pre-quantized (AutoAWQ gemm) checkpoint: its Linear weights are
    // .qweight/.qzeros/.scales instead of .weight.
    std::optional<QuantizationConfig> quantization;

    int qDim() const { return numHeads * headDim; }     // width of q_proj's output
    int kvDim() const { return numKvHeads * headDim; }  // width of k_proj / v_proj's output
    int groupSize() const { return numHeads / numKvHeads; }
    // The RoPE frequencies of this model, rope_scaling applied (as transformers computes them).
    std::vector<float> ropeInverseFrequencies() const;
    // Bytes of KV cache per token for an element size (2 for bf16/fp16, 4 for fp32).
    int64_t kvBytesPerToken(int elementBytes) const { return int64_t(numLayers) * 2 * kvDim() * elementBytes; }
};

// Parses config.json text. `sourceName` names the file in error messages.
Result<ModelConfig> parseModelConfig(std::string_view json, const std::string& sourceName);
Result<ModelConfig> loadModelConfig(const std::filesystem::path& configJson);

}  // namespace brook
