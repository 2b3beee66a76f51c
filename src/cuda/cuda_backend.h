// CudaBackend: ERNIE-4.5 on an NVIDIA GPU in bf16/fp16. Weights uploaded once (fused QKV and
// gate-up), a paged KV cache sized by --gpu-memory-utilization the way vLLM sizes it (weights,
// then a profiling forward at max_num_batched_tokens, then blocks from what is left), cuBLASLt
// GEMMs with fp32 accumulation, our own kernels for the rest, sampling on the GPU, and decode
// steps and short single-sequence prefills replayed from CUDA graphs captured per bucket
// (ForwardGraphs; off with --enforce-eager).
// Engine thread only, except where the Backend interface says thread-safe.
#pragma once

#include "cuda/cublaslt_gemm.h"
#include "cuda/cuda_dtype.h"
#include "cuda/cuda_features.h"
#include "cuda/cuda_weights.h"
#include "cuda/forward_graphs.h"
#include "cuda/device_buffer.h"
#include "cuda/gpu_sampler.h"
#include "cuda/step_inputs.h"
#include "engine/backend.h"
#include "engine/checkpoint.h"
#include "engine/quantized_layer_loader.h"
#include "engine/result.h"
#include "engine/serving_settings.h"

#include <functional>
#include <memory>

namespace brook::cuda {

// Prefill steps of at least this many tokens run a quantized Linear as dequantize + cuBLASLt.
inline constexpr int kDequantizeMinTokens = 64;

// The CUDA backend's own settings, typed (the launcher parses the flags into them). Sizing of the
// KV cache goes through CapacityPlanner with the bytes the profiling forward measured.
struct CudaBackendOptions {
    DTypeChoice dtype = DTypeChoice::Auto;  // Auto: bf16 where the GPU has it, else fp16; not Float32
    QuantizationSpec quantization;          // resolveQuantization's result; default: dense
    int maxModelLen = 0;                    // 0: the model's max_position_embeddings
    int maxNumSeqs = 256;
    int maxNumBatchedTokens = 8192;
    int blockSize = 16;
    int numKvBlocks = 0;  // > 0 caps the memory-based size (tests)
    double gpuMemoryUtilization = 0.9;
    bool enforceEager = false;                   // no CUDA graphs
    std::function<void(double)> onLoadProgress;  // fraction done, 0..1 (optional)
    CudaFeatures features;                       // kernel features (experiments switch them off)
};

class CudaBackend final : public Backend {
public:
    // Errors are typed (result.h) and name settings by their field ("gpu_memory_utilization"),
    // not by a front end's flags: the CLI and the app each say it in their own terms.
    static Result<std::unique_ptr<CudaBackend>> create(const ModelConfig& config, const Checkpoint& checkpoint,
                                                       const CudaBackendOptions& options);
    ~CudaBackend() override;

    std::string name() const override { return "cuda"; }
    std::string kvCacheDtype() const override { return "auto"; }
    const ModelConfig& config() const override { return m_config; }
    int numKvBlocks() const override { return m_numBlocks; }
    int blockSize() const override { return m_blockSize; }
    BackendMemory memory() const override;

    void prepareStep(std::span<const BatchSequence> batch) override;
    std::vector<SampleResult> step(std::span<const BatchSequence> batch) override;
    std::vector<float> logits(std::span<const BatchSequence> batch) override;

    // Benchmarks only (brook-step-bench): uploads the batch once, then times `iterations`
    // forwards on the GPU alone (CUDA events; graph replays when the batch is a graph-able
    // decode step), without sampling. Returns microseconds per forward.
    double timeForward(std::span<const BatchSequence> batch, int iterations);
    // Tests only: single-sequence prefill steps replayed from a graph so far.
    int64_t prefillGraphReplays() const { return m_graphs ? m_graphs->prefillReplays() : 0; }

private:
    friend class ForwardGraphs;
    CudaBackend(ModelConfig config, ElementType type, CudaWeights weights, const CudaBackendOptions& options);
    void allocateActivations();
    // Plans and first-launches every padded cuBLASLt shape a step can use, so that no request
    // pays for it: planning one shape took ~0.2 ms and a GEMM kernel's first launch (lazy module
    // loading) up to ~15 ms on an H200, at the first prompt of each new length bucket.
    void warmUpGemms();
    Result<void> allocateKvCache(int64_t kvBytes);
    // Launches the whole forward for the inputs in m_inputs, ending with fp32 logits of the
    // sampled rows in m_logits. decode: every sequence has one token. fixedShape (graph capture):
    // every launch shape follows from the padded token and sequence counts and the maximum model
    // length, never from this step's query or context lengths, so a replay serves any step of
    // the bucket.
    void forward(bool decode, cudaStream_t stream, bool fixedShape = false);
    // How a step runs: a pure decode step (one token per sequence, all sampled) replays the
    // decode graph of `bucket`, a short single-sequence prefill the prefill graph of
    // `prefillBucket`, when there is one (both 0: eager forward).
    struct StepLaunch {
        bool decode = false;
        int bucket = 0;
        int prefillBucket = 0;
    };
    // Uploads the batch's inputs (padded to the graph bucket) and says how to run it.
    StepLaunch upload(std::span<const BatchSequence> batch);
    void launchForward(const StepLaunch& launch);
    // Uploads the batch and runs it, from a graph when possible, unless prepareStep already
    // launched this batch. Returns the sampled-row count.
    int run(std::span<const BatchSequence> batch);
    // The batch prepareStep launched (its span's address and size; the engine passes one
    // vector to both calls), consumed by the next run().
    const BatchSequence* m_preparedData = nullptr;
    size_t m_preparedSize = 0;

    ModelConfig m_config;
    ElementType m_type;
    CudaWeights m_weights;
    int m_blockSize;
    StepLimits m_limits;  // the engine's per-step limits
    int m_maxTokens;      // per step: max(max_num_batched_tokens, max_num_seqs)
    int m_maxSeqs;        // sampled rows per step: max_num_seqs
    int m_maxModelLen;
    int m_numBlocks = 0;
    bool m_enforceEager;
    cudaStream_t m_stream = nullptr;
    std::unique_ptr<CublasLtGemm> m_gemm;
    std::unique_ptr<StepInputs> m_inputs;
    std::unique_ptr<GpuSampler> m_sampler;
    std::unique_ptr<ForwardGraphs> m_graphs;
    DeviceBuffer m_invFreq;  // [HD/2] fp32
    DeviceBuffer m_kvCache;  // K then V: [L][blocks][blockSize][KVH][HD] each
    // Activations, sized for m_maxTokens tokens ([T, ...]) and m_maxSeqs sampled rows.
    DeviceBuffer m_residual;     // [T, H] fp32
    DeviceBuffer m_normed;       // [T, H]
    DeviceBuffer m_qkv;          // [T, NH*HD + 2*KVH*HD]
    DeviceBuffer m_q;            // [T, NH*HD]
    DeviceBuffer m_attn;         // [T, NH*HD]
    DeviceBuffer m_gateUp;       // [T, 2I]
    DeviceBuffer m_act;          // [T, I]
    DeviceBuffer m_finalNormed;  // [S, H]
    DeviceBuffer m_logits;       // [S, V] fp32
    DeviceBuffer m_attnWorkspace;
    DeviceBuffer m_prefillSplitWorkspace;  // split-KV prefill partials (empty: no splitting)
    DeviceBuffer m_dequantized;            // quantized models: one Linear in the element type
    int64_t m_activationBytes = 0;
    int64_t m_deviceTotal = 0;
};

}  // namespace brook::cuda
