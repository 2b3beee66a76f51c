// CudaBackend: ERNIE-4.5 on an NVIDIA GPU in bf16/fp16. Weights uploaded once (fused QKV and
// gate-up), a paged KV cache sized by --gpu-memory-utilization the way vLLM sizes it (weights,
// then a profiling forward at max_num_batched_tokens, then blocks from what is left), cuBLASLt
// GEMMs with fp32 accumulation, our own kernels for the rest, sampling on the GPU, and decode
// steps replayed from CUDA graphs captured per batch-size bucket (off with --enforce-eager).
// Engine thread only, except where the Backend interface says thread-safe.
#pragma once

#include "backends/launch_options.h"
#include "cuda/cublaslt_gemm.h"
#include "cuda/cuda_dtype.h"
#include "cuda/cuda_weights.h"
#include "cuda/decode_graphs.h"
#include "cuda/device_buffer.h"
#include "cuda/gpu_sampler.h"
#include "cuda/step_inputs.h"
#include "engine/backend.h"
#include "engine/checkpoint.h"
#include "engine/result.h"

#include <memory>

namespace brook::cuda {

// Prefill steps of at least this many tokens run a quantized Linear as dequantize + cuBLASLt.
inline constexpr int kDequantizeMinTokens = 64;

class CudaBackend final : public Backend {
public:
    static Result<std::unique_ptr<CudaBackend>> create(const ModelConfig& config, const Checkpoint& checkpoint,
                                                       const LaunchOptions& options);
    ~CudaBackend() override;

    std::string name() const override { return "cuda"; }
    const ModelConfig& config() const override { return m_config; }
    int numKvBlocks() const override { return m_numBlocks; }
    int blockSize() const override { return m_blockSize; }
    BackendMemory memory() const override;

    std::vector<SampleResult> step(std::span<const BatchSequence> batch) override;
    std::vector<float> logits(std::span<const BatchSequence> batch) override;

    ElementType elementType() const { return m_type; }

    // Benchmarks only (brook-step-bench): uploads the batch once, then times `iterations`
    // forwards on the GPU alone (CUDA events; graph replays when the batch is a graph-able
    // decode step), without sampling. Returns microseconds per forward.
    double timeForward(std::span<const BatchSequence> batch, int iterations);

private:
    friend class DecodeGraphs;
    CudaBackend(ModelConfig config, ElementType type, CudaWeights weights, const LaunchOptions& options);
    void allocateActivations();
    Result<void> allocateKvCache(int64_t kvBytes);
    // Launches the whole forward for the inputs in m_inputs, ending with fp32 logits of the
    // sampled rows in m_logits. decode: every sequence has one token (graph-capturable).
    void forward(bool decode, cudaStream_t stream);
    // How a step runs: a pure decode step (one token per sequence, all sampled) replays the graph
    // of `bucket` when there is one (0: eager forward).
    struct StepLaunch {
        bool decode = false;
        int bucket = 0;
    };
    // Uploads the batch's inputs (padded to the graph bucket) and says how to run it.
    StepLaunch upload(std::span<const BatchSequence> batch);
    void launchForward(const StepLaunch& launch);
    // Uploads the batch and runs it, from a graph when possible. Returns the sampled-row count.
    int run(std::span<const BatchSequence> batch);

    ModelConfig m_config;
    ElementType m_type;
    CudaWeights m_weights;
    int m_blockSize;
    int m_maxTokens;      // per step: max(max_num_batched_tokens, max_num_seqs)
    int m_maxSeqs;
    int m_maxModelLen;
    int m_numBlocks = 0;
    bool m_enforceEager;
    cudaStream_t m_stream = nullptr;
    std::unique_ptr<CublasLtGemm> m_gemm;
    std::unique_ptr<StepInputs> m_inputs;
    std::unique_ptr<GpuSampler> m_sampler;
    std::unique_ptr<DecodeGraphs> m_graphs;
    DeviceBuffer m_invFreq;                  // [HD/2] fp32
    DeviceBuffer m_kvCache;                  // K then V: [L][blocks][blockSize][KVH][HD] each
    // Activations, sized for m_maxTokens tokens ([T, ...]) and m_maxSeqs sampled rows.
    DeviceBuffer m_residual;                 // [T, H] fp32
    DeviceBuffer m_normed;                   // [T, H]
    DeviceBuffer m_qkv;                      // [T, NH*HD + 2*KVH*HD]
    DeviceBuffer m_q;                        // [T, NH*HD]
    DeviceBuffer m_attn;                     // [T, NH*HD]
    DeviceBuffer m_gateUp;                   // [T, 2I]
    DeviceBuffer m_act;                      // [T, I]
    DeviceBuffer m_finalNormed;              // [S, H]
    DeviceBuffer m_logits;                   // [S, V] fp32
    DeviceBuffer m_attnWorkspace;
    DeviceBuffer m_dequantized;              // quantized models: one Linear in the element type
    int64_t m_activationBytes = 0;
    int64_t m_deviceTotal = 0;
};

} // namespace brook::cuda
