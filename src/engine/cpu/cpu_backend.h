// CpuBackend: ERNIE-4.5 on the CPU: weights in the checkpoint's precision (bf16, fp32, or int8
// with --quantization; CpuModelWeights), activations and the KV cache in fp32, Linears through
// matmul (cpu_gemm.h) on the vector path chosen at start (cpu_features.h), OpenMP attention over
// a paged host KV cache, and the CPU sampler. A real backend for machines without a GPU and the
// reference the CUDA backend is checked against. Engine thread only, except where the
// Backend interface says thread-safe.
#pragma once

#include "engine/backend.h"
#include "engine/checkpoint.h"
#include "engine/cpu/cpu_attention.h"
#include "engine/cpu/cpu_features.h"
#include "engine/cpu/cpu_gemm.h"
#include "engine/cpu/cpu_model_weights.h"
#include "engine/cpu/cpu_thread_pool.h"
#include "engine/cpu/cpu_vector_ops.h"
#include "engine/huge_pages.h"
#include "engine/quantized_layer_loader.h"
#include "engine/result.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace brook::cpu {

struct CpuBackendOptions {
    int blockSize = 16;
    int numKvBlocks = 0;                         // 0: from kvCacheBytes
    int64_t kvCacheBytes = 2LL << 30;            // host memory for K and V of all layers
    std::function<void(double)> onLoadProgress;  // fraction done, 0..1 (optional)
    QuantizationSpec quantization;               // resolveQuantization's result; default: dense
    std::optional<CpuIsa> isa;                   // the vector path; default activeCpuIsa() (tests pick each)
    // bf16 Linears: activations rounded to bf16 (default), or the exact fp32 mode of --dtype
    // float32 (cpu_gemm.h). fp32 and quantized weights compute the same either way.
    Bf16Arithmetic arithmetic = Bf16Arithmetic::RoundedActivations;
    int threads = 0;                             // CpuThreadPool size; 0: BROOK_CPU_THREADS or all cores
    // A forward pass over this many dummy tokens at load (0: none), as llama.cpp's warm-up run and
    // vLLM's profile run do: the step workspaces and the first KV blocks get their pages then,
    // not during the first requests (about 15 us a 4 KB page fault in a VM: a cold 256-token
    // prompt took ~400 ms against ~240 ms warm).
    int warmupTokens = 0;
};

// Frees a buffer from allocateHugePageBacked (the KV cache's unique_ptr deleter).
struct HugePageFree {
    size_t bytes = 0;
    void operator()(float* p) const noexcept { freeHugePageBacked(p, bytes); }
};

class CpuBackend final : public Backend {
public:
    static Result<std::unique_ptr<CpuBackend>> create(const ModelConfig& config, const Checkpoint& checkpoint,
                                                      const CpuBackendOptions& options);

    std::string name() const override { return "cpu"; }
    std::string kvCacheDtype() const override { return "float32"; }
    const ModelConfig& config() const override { return m_config; }
    int numKvBlocks() const override { return m_numBlocks; }
    int blockSize() const override { return m_blockSize; }
    BackendMemory memory() const override;
    CpuIsa isa() const { return m_isa; }  // the vector path the kernels run; thread-safe

    std::vector<SampleResult> step(std::span<const BatchSequence> batch) override;
    std::vector<float> logits(std::span<const BatchSequence> batch) override;

private:
    CpuBackend(ModelConfig config, CpuModelWeights weights, CpuIsa isa, int threads, int blockSize, int numBlocks);
    // Runs all layers; leaves the final-normed hidden state of each sampled sequence's last
    // token in m_sampledHidden [S, H].
    void forward(std::span<const BatchSequence> batch);
    // forward, then the head: m_logits [S, V] for the sampled sequences.
    void computeLogits(std::span<const BatchSequence> batch);
    void writeKv(int layer, const float* kvRows, std::span<const BatchSequence> batch);
    // Moves each sampled sequence's last row of m_q and m_x to the front, in batch order, and
    // adds its one query to `attention`; returns how many rows were kept.
    int keepSampledRows(std::span<const BatchSequence> batch, std::vector<AttentionSequence>& attention);
    // One sequence of `tokens` dummy tokens through the whole model, head included, into the
    // first KV blocks (the block manager hands those out first; what it writes there is never
    // read: attention reads only the slots a request's own steps wrote).
    void warmUp(int tokens);
    // Samples the warm-up's logits rows on the pool, so that the pool threads' per-thread sampler
    // scratch is touched at load (best effort: a row goes to whichever thread claims it).
    void warmUpSamplers();
    // Times the lm head with and without the kernels' software prefetch and keeps the faster
    // (weight_prefetch.h): int8 / int4 with VNNI, bf16 with vdpbf16ps; nothing otherwise.
    void calibrateWeightPrefetch();

    ModelConfig m_config;
    CpuModelWeights m_weights;
    CpuIsa m_isa;
    int m_blockSize;
    int m_numBlocks;
    // [L][blocks][blockSize][KVH][HD] each, left uninitialized: attention reads only slots a step
    // has written, and a 2 GB zero-fill cost ~1 s at start and made every page resident at once
    // (untouched, the OS maps them on first write). On huge pages (engine/huge_pages.h): a new
    // block is 16 KB in each of the layers' K and V, 144 first touches of 4 KB pages at ~15 us
    // in a VM, 2.2 ms a sequence every 16 tokens; a 2 MB page holds a layer's next 128 blocks.
    // Each layer's part starts on a 2 MB boundary (m_layerFloats apart): the warm-up pass's
    // blocks then share their huge page with a layer's next 128 blocks in every layer. Unaligned
    // (58.2 MB a layer here), some layers' pages ended a few blocks past the warm-up's, and a
    // batch-8 run faulted a fresh 2 MB page in the middle of its decode steps (3.7-7.3 ms each).
    std::unique_ptr<float[], HugePageFree> m_kCache, m_vCache;
    size_t m_layerFloats = 0;  // per layer, rounded up to whole huge pages
    size_t m_cacheFloats = 0;  // per cache
    float* kLayer(int layer) const { return m_kCache.get() + m_layerFloats * size_t(layer); }
    float* vLayer(int layer) const { return m_vCache.get() + m_layerFloats * size_t(layer); }
    // Step workspace, reused across steps.
    const CpuVectorOps* m_ops;
    // Bf16 on Avx512Bf16 unless the weights are fp32: a bf16 model's prompt Linears round their
    // inputs to bf16 (an int8 or int4 model's to int8 codes), so attention in bf16 pairs costs
    // them nothing measurable (test_cpu_backend_paths) for up to twice its speed. fp32 weights
    // keep fp32 attention, and their 1e-4 parity with transformers (test_hf_reference).
    Bf16Arithmetic m_arithmetic = Bf16Arithmetic::RoundedActivations;
    std::unique_ptr<CpuThreadPool> m_pool;    // the step's workers, created once
    std::vector<float> m_invFreq;             // [HD/2] RoPE inverse frequencies
    std::vector<float> m_ropeCos, m_ropeSin;  // [T, HD/2] this step's angles
    std::vector<float> m_x, m_h, m_qkv, m_q, m_attn, m_gateUp, m_act, m_sampledHidden, m_logits;
    MatmulScratch m_matmulScratch;  // sized by the warm-up pass, whichever thread steps later
};

}  // namespace brook::cpu
