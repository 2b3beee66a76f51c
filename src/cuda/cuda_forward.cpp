// CudaBackend's forward pass: the kernel sequence of one engine step, from token ids to the
// fp32 logits of the sampled rows. The residual stream is fp32; o_proj and down_proj add into
// it directly from the GEMM epilogue (beta = 1), so no separate residual-add kernel runs.
//   per layer: rmsnorm -> qkv GEMM -> RoPE + cache write -> attention -> o GEMM (+= residual)
//              -> rmsnorm -> gate-up GEMM -> SiLU*up -> down GEMM (+= residual)
// (at <= 4 tokens, 8 with quantized Linears, the rmsnorms and SiLU*up are fused into the GEMVs
// that consume them, and RoPE + cache write into the qkv GEMV's epilogue: 5 kernels per layer,
// attention included; from 5 to 32 tokens of a dense model the fused GEMM takes RoPE + cache
// write and SiLU*up into its epilogues and splits K without a reduction kernel: 7).
#include "cuda/cuda_backend.h"

#include "cuda/cuda_check.h"
#include "cuda/fused_gemm.h"
#include "cuda/layer_kernels.h"
#include "cuda/paged_attention.h"
#include "cuda/quant_matmul.h"
#include "cuda/skinny_gemm.h"

#include <algorithm>

namespace brook::cuda {

void CudaBackend::allocateActivations()
{
    const ModelConfig& c = m_config;
    // Rows as the padded cuBLASLt calls read and write them (CublasLtGemm::setPadRows).
    const size_t T = size_t(CublasLtGemm::paddedRows(m_maxTokens)), S = size_t(CublasLtGemm::paddedRows(m_maxSeqs)),
                 e = 2;
    const size_t qkvDim = size_t(c.qDim() + 2 * c.kvDim());
    m_residual = DeviceBuffer(T * c.hiddenSize * sizeof(float));
    m_normed = DeviceBuffer(T * c.hiddenSize * e);
    m_qkv = DeviceBuffer(T * qkvDim * e);
    m_q = DeviceBuffer(T * c.qDim() * e);
    m_attn = DeviceBuffer(T * c.qDim() * e);
    m_gateUp = DeviceBuffer(T * 2 * c.intermediateSize * e);
    m_act = DeviceBuffer(T * c.intermediateSize * e);
    m_finalNormed = DeviceBuffer(S * c.hiddenSize * e);
    m_logits = DeviceBuffer(S * c.vocabSize * sizeof(float));
    m_attnWorkspace = DeviceBuffer(
        paged_attention_decode_workspace_bytes(m_maxSeqs, c.numHeads, c.numKvHeads, c.headDim, m_maxModelLen));
    if (cudaFeatures().splitKvPrefill)
        m_prefillSplitWorkspace = DeviceBuffer(paged_attention_prefill_workspace_bytes(c.numHeads, c.headDim));
    // The decode kernel keeps completion counters at the workspace's end that every launch leaves
    // at zero; they must start at zero.
    if (m_attnWorkspace.bytes()) BROOK_CUDA_CHECK(cudaMemset(m_attnWorkspace.get(), 0, m_attnWorkspace.bytes()));
    // Scratch for dequantized Linears (long prefills of a quantized model): the largest one.
    if (!m_weights.layers().empty() && m_weights.layers()[0].quantized && m_maxTokens >= kDequantizeMinTokens)
        m_dequantized = DeviceBuffer(size_t(std::max({qkvDim * size_t(c.hiddenSize), size_t(c.hiddenSize) * c.qDim(),
                                                      2 * size_t(c.intermediateSize) * c.hiddenSize})) *
                                     e);
    m_activationBytes =
        int64_t(m_dequantized.bytes() + m_residual.bytes() + m_normed.bytes() + m_qkv.bytes() + m_q.bytes() +
                m_attn.bytes() + m_gateUp.bytes() + m_act.bytes() + m_finalNormed.bytes() + m_logits.bytes() +
                m_attnWorkspace.bytes() + m_prefillSplitWorkspace.bytes());
}

void CudaBackend::warmUpGemms()
{
    const ModelConfig& c = m_config;
    const int H = c.hiddenSize, I = c.intermediateSize, qDim = c.qDim(), qkvDim = c.qDim() + 2 * c.kvDim();
    const CudaLayerWeights& w = m_weights.layers()[0];
    // Quantized Linears reach cuBLASLt only for long prefills, through the dequantized scratch.
    // Every bucket is at least 16 rows: past the skinny kernel's few.
    const bool quantized = w.quantized;
    auto weights = [&](const void* dense) { return quantized ? m_dequantized.get() : dense; };
    const int maxRows = CublasLtGemm::paddedRows(m_maxTokens);
    if (!quantized || m_dequantized.get())
        for (int M = CublasLtGemm::paddedRows(quantized ? kDequantizeMinTokens : 1); M <= maxRows;
             M = CublasLtGemm::paddedRows(M + 1)) {
            m_gemm->matmul(m_normed.get(), weights(w.qkv), m_qkv.get(), M, qkvDim, H, m_type, false, m_stream);
            m_gemm->matmul(m_attn.get(), weights(w.o), m_residual.get(), M, H, qDim, m_type, true, m_stream, 1.0f);
            m_gemm->matmul(m_normed.get(), weights(w.gateUp), m_gateUp.get(), M, 2 * I, H, m_type, false, m_stream);
            m_gemm->matmul(m_act.get(), weights(w.down), m_residual.get(), M, H, I, m_type, true, m_stream, 1.0f);
        }
    for (int M = CublasLtGemm::paddedRows(1); M <= CublasLtGemm::paddedRows(m_maxSeqs);
         M = CublasLtGemm::paddedRows(M + 1))
        m_gemm->matmul(m_finalNormed.get(), m_weights.lmHead(), m_logits.get(), M, c.vocabSize, H, m_type, true,
                       m_stream);
    BROOK_CUDA_CHECK(cudaStreamSynchronize(m_stream));
}

void CudaBackend::forward(bool decode, cudaStream_t stream, bool fixedShape)
{
    const ModelConfig& c = m_config;
    const int T = m_inputs->numTokens(), S = m_inputs->numSampled();
    const int H = c.hiddenSize, I = c.intermediateSize, qDim = c.qDim(), qkvDim = c.qDim() + 2 * c.kvDim();
    const float eps = float(c.rmsNormEps);
    const size_t layerCacheBytes = size_t(m_numBlocks) * m_blockSize * c.kvDim() * 2;
    auto* kBase = static_cast<std::byte*>(m_kvCache.get());
    auto* vBase = kBase + layerCacheBytes * c.numLayers;
    float* residual = m_residual.as<float>();

    AttentionBatch attention;
    attention.numSeqs = m_inputs->numSeqs();
    attention.queryStart = m_inputs->queryStart();
    attention.contextLens = m_inputs->contextLens();
    attention.blockTables = m_inputs->blockTables();
    attention.maxBlocksPerSeq = m_inputs->maxBlocksPerSeq();
    // A captured prefill graph serves any query and context length of its bucket: the grid covers
    // every token as one query run and the key splits cover the longest context.
    const int maxQueryLen = fixedShape ? T : m_inputs->maxQueryLen();
    PrefillSplit prefillSplit;
    prefillSplit.numTokens = T;
    prefillSplit.maxContextLen = fixedShape ? m_maxModelLen : m_inputs->maxContextLen();
    prefillSplit.workspace = m_prefillSplitWorkspace.get();
    prefillSplit.workspaceBytes = m_prefillSplitWorkspace.bytes();

    // Up to 4 tokens (decode of small batches; 8 for quantized Linears, whose GEMV has no cuBLASLt
    // alternative) the norms and the SwiGLU activation run inside the GEMVs' prologues: 3 fewer
    // kernels per layer on the latency-bound path.
    const bool fusedDense = skinny_gemm_preferred(T, H) && skinny_gemm_preferred(T, I);
    const bool fusedQuant = skinny_gemm_supported(T, H) && skinny_gemm_supported(T, I) && T <= kQuantGemvMaxRows;
    // Past that, up to kFusedGemmPreferredMaxRows tokens, dense Linears take the fused GEMM
    // (tensor cores, RoPE and SiLU*up in its epilogues).
    const bool fusedTiles = !fusedDense && fused_gemm_preferred(T, qkvDim, H) && fused_gemm_preferred(T, H, qDim) &&
                            fused_gemm_preferred(T, 2 * I, H) && fused_gemm_preferred(T, H, I);
    AttentionShape shape;
    shape.numHeads = c.numHeads;
    shape.numKvHeads = c.numKvHeads;
    shape.headDim = c.headDim;
    shape.blockSize = m_blockSize;

    SkinnyRope rope;
    rope.q = m_q.get();
    rope.positions = m_inputs->positions();
    rope.slotMapping = m_inputs->slotMapping();
    rope.invFreq = m_invFreq.as<float>();
    rope.numHeads = c.numHeads;
    rope.numKvHeads = c.numKvHeads;
    rope.headDim = c.headDim;

    launch_embedding(m_inputs->ids(), m_weights.embedding(), residual, T, H, m_type, stream);
    // out (+)= x @ W^T for a Linear without a fused prologue: dense through cuBLASLt (which sends
    // small M to the skinny kernel), quantized through the W4A16/W8A16 GEMV or GEMM.
    auto project = [&](const void* x, const void* dense, const QuantDeviceWeight& q, bool quantized, void* out, int N,
                       int K, bool outFloat, bool accumulate) {
        if (!quantized && fusedTiles) {
            // Every unfused call of this path is a plain store or an fp32 residual add.
            launch_fused_gemm(x, dense, out, T, N, K, m_type,
                              accumulate && outFloat ? FusedEpilogue::AddToFloat : FusedEpilogue::Store, stream);
        } else if (!quantized) {
            m_gemm->matmul(x, dense, out, T, N, K, m_type, outFloat, stream, accumulate ? 1.0f : 0.0f);
        } else if (T <= kQuantGemvMaxRows) {
            launch_quant_gemv(x, q, out, T, m_type, outFloat, accumulate, stream);
        } else if (T < kDequantizeMinTokens) {
            launch_quant_gemm(x, q, out, T, m_type, outFloat, accumulate, stream);
        } else {
            // Long prefills: dequantize into a scratch matrix and run the dense cuBLASLt GEMM, as
            // vLLM's AWQ path does from 256 tokens (quant_matmul_bench: 48 us instead of 289 us
            // for gate|up at 2048 tokens on an H200).
            launch_quant_dequantize(q, m_dequantized.get(), m_type, stream);
            m_gemm->matmul(x, m_dequantized.get(), out, T, N, K, m_type, outFloat, stream, accumulate ? 1.0f : 0.0f);
        }
    };
    auto ropeCacheWrite = [&](void* kCache, void* vCache) {
        launch_rope_cache_write(m_qkv.get(), m_q.get(), kCache, vCache, m_inputs->positions(), m_inputs->slotMapping(),
                                m_invFreq.as<float>(), T, c.numHeads, c.numKvHeads, c.headDim, m_blockSize, m_type,
                                stream);
    };

    for (int l = 0; l < c.numLayers; ++l) {
        const CudaLayerWeights& w = m_weights.layers()[size_t(l)];
        const bool quant = w.quantized;  // this layer's Linears are 4- or 8-bit
        void* kCache = kBase + layerCacheBytes * l;
        void* vCache = vBase + layerCacheBytes * l;
        const bool fused = quant ? fusedQuant : fusedDense;
        if (fused && !quant) {  // RoPE and the cache write run in the GEMM's epilogue
            rope.kCache = kCache;
            rope.vCache = vCache;
            launch_skinny_gemm(residual, w.qkv, nullptr, T, qkvDim, H, m_type, false, false, stream,
                               SkinnyPrologue::RmsNorm, w.inputNorm, eps, &rope);
        } else if (fusedTiles && !quant) {
            rope.kCache = kCache;
            rope.vCache = vCache;
            launch_add_rmsnorm(residual, nullptr, w.inputNorm, m_normed.get(), nullptr, T, H, eps, m_type, stream);
            launch_fused_gemm(m_normed.get(), w.qkv, nullptr, T, qkvDim, H, m_type, FusedEpilogue::RopeCache, stream,
                              &rope);
        } else if (fused) {
            launch_quant_gemv(residual, w.qkvQ, m_qkv.get(), T, m_type, false, false, stream, SkinnyPrologue::RmsNorm,
                              w.inputNorm, eps);
            ropeCacheWrite(kCache, vCache);
        } else {
            launch_add_rmsnorm(residual, nullptr, w.inputNorm, m_normed.get(), nullptr, T, H, eps, m_type, stream);
            project(m_normed.get(), w.qkv, w.qkvQ, quant, m_qkv.get(), qkvDim, H, false, false);
            ropeCacheWrite(kCache, vCache);
        }
        if (decode)
            launch_paged_attention_decode(m_type, m_q.get(), m_attn.get(), kCache, vCache, attention, m_maxModelLen,
                                          shape, m_attnWorkspace.get(), m_attnWorkspace.bytes(), stream);
        else
            launch_paged_attention_prefill(m_type, m_q.get(), m_attn.get(), kCache, vCache, attention, maxQueryLen,
                                           shape, stream, prefillSplit);
        project(m_attn.get(), w.o, w.oQ, quant, residual, H, qDim, true, true);
        if (fused && !quant) {
            launch_skinny_gemm(residual, w.gateUp, m_gateUp.get(), T, 2 * I, H, m_type, false, false, stream,
                               SkinnyPrologue::RmsNorm, w.postNorm, eps);
            launch_skinny_gemm(m_gateUp.get(), w.down, residual, T, H, I, m_type, true, true, stream,
                               SkinnyPrologue::SiluMul);
        } else if (fusedTiles && !quant) {
            launch_add_rmsnorm(residual, nullptr, w.postNorm, m_normed.get(), nullptr, T, H, eps, m_type, stream);
            launch_fused_gemm(m_normed.get(), w.gateUp, m_act.get(), T, 2 * I, H, m_type, FusedEpilogue::SiluMul,
                              stream);
            project(m_act.get(), w.down, w.downQ, quant, residual, H, I, true, true);
        } else if (fused) {
            launch_quant_gemv(residual, w.gateUpQ, m_gateUp.get(), T, m_type, false, false, stream,
                              SkinnyPrologue::RmsNorm, w.postNorm, eps);
            launch_quant_gemv(m_gateUp.get(), w.downQ, residual, T, m_type, true, true, stream,
                              SkinnyPrologue::SiluMul);
        } else {
            launch_add_rmsnorm(residual, nullptr, w.postNorm, m_normed.get(), nullptr, T, H, eps, m_type, stream);
            project(m_normed.get(), w.gateUp, w.gateUpQ, quant, m_gateUp.get(), 2 * I, H, false, false);
            launch_silu_mul(m_gateUp.get(), m_act.get(), T, I, m_type, stream);
            project(m_act.get(), w.down, w.downQ, quant, residual, H, I, true, true);
        }
    }
    launch_add_rmsnorm(residual, nullptr, m_weights.finalNorm(), m_finalNormed.get(), m_inputs->sampleRows(), S, H, eps,
                       m_type, stream);
    m_gemm->matmul(m_finalNormed.get(), m_weights.lmHead(), m_logits.get(), S, c.vocabSize, H, m_type, true, stream);
}

}  // namespace brook::cuda
