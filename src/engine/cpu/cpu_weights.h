// CpuWeights: ERNIE-4.5's weights converted once to fp32 at load, with q/k/v and gate/up
// fused row-wise so each layer does two GEMMs fewer. With a QuantizationSpec the Linears come
// from loadQuantizedLayer and are dequantized, so the CPU computes what the W4A16 / W8A16 GPU
// kernels compute (up to accumulation order) and can serve as their reference.
#pragma once

#include "engine/checkpoint.h"
#include "engine/model_config.h"
#include "engine/quantized_layer_loader.h"
#include "engine/result.h"

#include <functional>
#include <vector>

namespace brook::cpu {

struct CpuLayerWeights {
    std::vector<float> inputNorm;  // [H]
    std::vector<float> qkv;        // [NH*HD + 2*KVH*HD, H]: q rows, then k, then v
    std::vector<float> o;          // [H, NH*HD]
    std::vector<float> postNorm;   // [H]
    std::vector<float> gateUp;     // [2*I, H]: gate rows, then up
    std::vector<float> down;       // [H, I]
};

struct CpuWeights {
    std::vector<float> embedding;      // [V, H]
    std::vector<float> lmHeadStorage;  // [V, H] only when untied
    const float* lmHead = nullptr;     // embedding or lmHeadStorage
    std::vector<float> finalNorm;      // [H]
    std::vector<CpuLayerWeights> layers;

    int64_t bytes() const;
    // The checkpoint must have passed Checkpoint::validate(config).
    // progress (optional) gets the fraction of tensors converted, from one thread at a time.
    // quantization: the resolved spec (resolveQuantization); not enabled() means dense weights.
    static Result<CpuWeights> load(const Checkpoint& checkpoint, const ModelConfig& config,
                                   const std::function<void(double)>& progress = {},
                                   const QuantizationSpec& quantization = {});
};

}  // namespace brook::cpu
