// CapacityPlanner: what a set of serving knobs gives on a device, before anything loads: weight
// bytes, KV-cache bytes per token, how many KV blocks and tokens fit, the concurrency that holds
// at max-model-len, which knob binds it, and when a setting cannot fit, the change that would.
// It follows the backends' own sizing so the plan matches what a load then reports:
//   CUDA: KV = total * gpu-memory-utilization - weights - activations - graph reserve
//         (activations = the forward buffers CudaBackend allocates for max-num-batched-tokens and
//         max-num-seqs, plus a fixed runtime allowance for cuBLASLt and attention workspaces);
//   CPU:  KV = min(cpu KV-cache bytes, max-num-seqs full-length sequences), all in fp32.
// Pure arithmetic; thread-safe.
#pragma once

#include "engine/model_config.h"
#include "engine/serving_settings.h"

#include <cstdint>
#include <string>

namespace brook {

// The serving knobs (device "auto" is resolved by the caller: anything but "cpu" plans for CUDA)
// plus the model and, for CUDA, the GPU's memory.
struct CapacityInput : ServingSettings {
    ModelConfig model;
    int64_t deviceTotalBytes = 0;  // CUDA: the GPU's memory
};

// What limits how many full-length requests run at once.
enum class CapacityLimit { MaxNumSeqs, KvCache, MaxNumBatchedTokens };
// Why a setting cannot load.
enum class CapacityProblem {
    None,
    QuantizationDoesNotApply,  // the model cannot take this quantization (quantizationError says why)
    ModelLenTooLong,
    NoDeviceMemory,
    WeightsDoNotFit,
    KvCacheTooSmall
};

struct CapacityPlan {
    int maxModelLen = 0;   // resolved
    int elementBytes = 2;  // activations and KV cache
    int64_t parameters = 0;
    int64_t weightsBytes = 0;
    int64_t activationBytes = 0;  // forward buffers + runtime allowance
    int64_t graphBytes = 0;       // CUDA graph reserve
    int64_t budgetBytes = 0;      // what the device may use (CUDA: total * utilization)
    int64_t kvBytesPerToken = 0;
    int64_t kvBytesPerBlock = 0;
    int64_t kvCacheBytes = 0;  // whole blocks only; <= 0 when nothing is left
    int64_t kvBlocks = 0;
    int64_t kvTokens = 0;
    int blocksPerSequence = 0;    // one request at max-model-len
    double maxConcurrency = 0;    // kvTokens / maxModelLen (vLLM's "maximum concurrency")
    int fullLengthSequences = 0;  // requests at max-model-len the cache holds at once
    int concurrentSequences = 0;  // min of that, max-num-seqs and max-num-batched-tokens
    CapacityLimit binding = CapacityLimit::KvCache;
    CapacityProblem problem = CapacityProblem::None;
    int suggestedMaxModelLen = 0;              // 0: none helps
    double suggestedGpuMemoryUtilization = 0;  // 0: none helps (CUDA)
    int64_t suggestedCpuKvCacheBytes = 0;      // CPU
    std::string quantizationError;             // resolveQuantization's reason, when it refuses
    bool fits() const { return problem == CapacityProblem::None; }
};

class CapacityPlanner {
public:
    // Runtime allowance on top of the forward buffers: cuBLASLt workspace, handles, sampler
    // scratch and attention partials (what CudaBackend's profile sees beyond its own buffers).
    static constexpr int64_t kCudaRuntimeBytes = 256LL << 20;
    static constexpr int64_t kCudaGraphBytes = 256LL << 20;  // CudaBackend's graph reserve

    static CapacityPlan plan(const CapacityInput& input);

    // The CPU backend's KV cache: the host memory offered, but never more than max-num-seqs
    // sequences of max-model-len (resolved: > 0) need.
    static int64_t cpuKvCacheBytes(const ModelConfig& model, const ServingSettings& settings, int maxModelLen);
    // The CUDA backend's KV cache from what its profiling pass measured: the budget
    // (total * gpu-memory-utilization) less weights, activations and runtime (`measuredUsedBytes`)
    // and the graph reserve. May be <= 0: nothing is left.
    static int64_t cudaKvCacheBytes(int64_t deviceTotalBytes, double gpuMemoryUtilization, bool enforceEager,
                                    int64_t measuredUsedBytes);
    static int64_t cudaGraphReserveBytes(bool enforceEager) { return enforceEager ? 0 : kCudaGraphBytes; }

    // Parameters of an ERNIE-4.5 dense model from its dimensions (tied head counted once).
    static int64_t parameterCount(const ModelConfig& model);
    // Bytes of weights: embeddings (and an untied head) in `elementBytes`, linear layers at the
    // quantized width (int8: 1 byte, int4/awq: half a byte, each plus a 2-byte fp16 scale and a
    // 1-byte zero per group of 128 along K, as QuantizedWeight stores them).
    static int64_t weightBytes(const ModelConfig& model, int elementBytes, const std::string& quantization);
    // What the CPU backend's weights take: the checkpoint's bf16 kept, fp16/fp32 as fp32 (by
    // config.json's torch_dtype), int8 Linears 8-bit, int4 ones 4-bit (embedding / head int8).
    static int64_t cpuWeightBytes(const ModelConfig& model, const std::string& quantization);
    // Forward buffers for T = max(max-num-batched-tokens, max-num-seqs) tokens and S = max-num-seqs
    // sampled rows, as CudaBackend::allocateActivations sizes them (or CpuBackend, in fp32).
    static int64_t activationBytes(const ModelConfig& model, int maxNumBatchedTokens, int maxNumSeqs, int elementBytes);
};

}  // namespace brook
