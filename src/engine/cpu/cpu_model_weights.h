// CpuModelWeights: the CPU backend's weights in the checkpoint's own precision. A bf16 checkpoint
// stays bf16 (half the memory of the fp32 copy and half the bytes a decode step streams); fp32 and
// fp16 checkpoints become fp32 (OpenBLAS). With a QuantizationSpec the layers' Linears are 8-bit
// or 4-bit CpuMatrix (int8 kept as int8, int4 as int4; groups not a multiple of 32 are
// dequantized to fp32); the embedding / lm head is then int8 (as llama.cpp's q8_0 files have it;
// BROOK_CPU_INT8_HEAD=0 keeps it bf16). q/k/v and gate/up are fused
// row-wise as in CpuWeights. (CpuWeights, the all-fp32 form, stays for the quantizer and AWQ.)
// Immutable after load; safe to read from any thread.
#pragma once

#include "engine/checkpoint.h"
#include "engine/cpu/cpu_matrix.h"
#include "engine/model_config.h"
#include "engine/quantized_layer_loader.h"
#include "engine/result.h"

#include <functional>
#include <vector>

namespace brook::cpu {

struct CpuModelLayer {
    std::vector<float> inputNorm;  // [H]
    CpuMatrix qkv;                 // [NH*HD + 2*KVH*HD, H]: q rows, then k, then v
    std::vector<float> qNorm, kNorm;  // [HD] each: Qwen3's per-head norms, empty elsewhere
    CpuMatrix o;                   // [H, NH*HD]
    std::vector<float> postNorm;   // [H]
    CpuMatrix gateUp;              // [2*I, H]: gate rows, then up
    CpuMatrix down;                // [H, I]
};

class CpuModelWeights {
public:
    CpuMatrix embedding;      // [V, H]
    CpuMatrix lmHeadStorage;  // [V, H], only when the checkpoint has lm_head.weight
    bool tiedHead = true;
    std::vector<float> finalNorm;  // [H]
    std::vector<CpuModelLayer> layers;

    const CpuMatrix& lmHead() const { return tiedHead ? embedding : lmHeadStorage; }
    int64_t bytes() const;
    // "bf16", "fp32", "int8 + bf16", ...: the Linears' format, then the embedding's when it differs.
    std::string describe() const;

    // The checkpoint must have passed Checkpoint::validate(config). progress (optional) gets
    // the fraction loaded, from one thread at a time.
    static Result<CpuModelWeights> load(const Checkpoint& checkpoint, const ModelConfig& config,
                                        const std::function<void(double)>& progress = {},
                                        const QuantizationSpec& quantization = {});
};

}  // namespace brook::cpu
