// CudaWeights: ERNIE-4.5's weights uploaded once in bf16 or fp16, q/k/v and gate/up fused
// row-wise (one GEMM each), all in one device allocation. With a QuantizationSpec the seven
// Linears of each layer are uploaded in Brook's 4/8-bit layout instead (quantized_weight.h);
// the embedding, the norms and the (tied) head stay in the element type.
#pragma once

#include "cuda/cuda_dtype.h"
#include "cuda/device_buffer.h"
#include "cuda/quant_matmul.h"
#include "engine/checkpoint.h"
#include "engine/model_config.h"
#include "engine/quantized_layer_loader.h"
#include "engine/result.h"

#include <functional>
#include <vector>

namespace brook::cuda {

struct CudaLayerWeights {
    const void* inputNorm = nullptr;  // [H]
    const void* qkv = nullptr;        // [NH*HD + 2*KVH*HD, H]
    const void* o = nullptr;          // [H, NH*HD]
    const void* postNorm = nullptr;   // [H]
    const void* gateUp = nullptr;     // [2I, H]
    const void* down = nullptr;       // [H, I]
    // With quantization the four Linears live here instead (the dense pointers stay null).
    bool quantized = false;
    QuantDeviceWeight qkvQ, oQ, gateUpQ, downQ;
};

class CudaWeights {
public:
    // The checkpoint must have passed validate(config). Throws CudaError on device errors.
    // progress (optional) gets the fraction of tensors uploaded.
    static Result<CudaWeights> upload(const Checkpoint& checkpoint, const ModelConfig& config, ElementType type,
                                      const std::function<void(double)>& progress = {},
                                      const QuantizationSpec& quantization = {});

    const void* embedding() const { return m_embedding; }  // [V, H]
    const void* lmHead() const { return m_lmHead; }        // [V, H] (the embedding when tied)
    const void* finalNorm() const { return m_finalNorm; }  // [H]
    const std::vector<CudaLayerWeights>& layers() const { return m_layers; }
    size_t bytes() const { return m_storage.bytes(); }

private:
    DeviceBuffer m_storage;
    const void* m_embedding = nullptr;
    const void* m_lmHead = nullptr;
    const void* m_finalNorm = nullptr;
    std::vector<CudaLayerWeights> m_layers;
};

}  // namespace brook::cuda
