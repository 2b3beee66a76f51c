// CudaWeights: ERNIE-4.5's weights uploaded once in bf16 or fp16, q/k/v and gate/up fused
// row-wise (one GEMM each), all in one device allocation.
#pragma once

#include "cuda/cuda_dtype.h"
#include "cuda/device_buffer.h"
#include "engine/checkpoint.h"
#include "engine/model_config.h"
#include "engine/result.h"

#include <functional>
#include <vector>

namespace brook::cuda {

struct CudaLayerWeights {
    const void* inputNorm;  // [H]
    const void* qkv;        // [NH*HD + 2*KVH*HD, H]
    const void* o;          // [H, NH*HD]
    const void* postNorm;   // [H]
    const void* gateUp;     // [2I, H]
    const void* down;       // [H, I]
};

class CudaWeights {
public:
    // The checkpoint must have passed validateErnie(config). Throws CudaError on device errors.
    // progress (optional) gets the fraction of tensors uploaded.
    static Result<CudaWeights> upload(const Checkpoint& checkpoint, const ModelConfig& config, ElementType type,
                                      const std::function<void(double)>& progress = {});

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

} // namespace brook::cuda
