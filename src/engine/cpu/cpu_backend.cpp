#include "engine/cpu/cpu_backend.h"

#include "engine/cpu/cpu_ops.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

namespace brook::cpu {

Result<std::unique_ptr<CpuBackend>> CpuBackend::create(const ModelConfig& config, const Checkpoint& checkpoint,
                                                       const CpuBackendOptions& options)
{
    if (auto valid = checkpoint.validateErnie(config); !valid) return makeError(valid.error());
    const auto& report = options.onLoadProgress;
    auto weights = CpuWeights::load(
        checkpoint, config, [&](double f) { if (report) report(0.9 * f); }, options.quantization);
    if (!weights) return makeError(weights.error());

    const int64_t blockBytes = config.kvBytesPerToken(sizeof(float)) * options.blockSize;
    int numBlocks = options.numKvBlocks;
    if (numBlocks <= 0) numBlocks = int(std::min<int64_t>(options.kvCacheBytes / blockBytes, 1 << 24));
    if (numBlocks <= 0)
        return makeError("KV cache of " + std::to_string(options.kvCacheBytes) + " bytes holds no block of " +
                         std::to_string(blockBytes) + " bytes");
    auto backend = std::unique_ptr<CpuBackend>(
        new CpuBackend(config, std::move(weights).value(), options.blockSize, numBlocks));
    spdlog::info("CPU backend: KV cache {} blocks x {} tokens ({:.1f} MiB)", numBlocks, options.blockSize,
                 double(blockBytes) * numBlocks / (1 << 20));
    if (report) report(1.0);
    return backend;
}

CpuBackend::CpuBackend(ModelConfig config, CpuWeights weights, int blockSize, int numBlocks)
    : m_config(std::move(config)), m_weights(std::move(weights)), m_blockSize(blockSize), m_numBlocks(numBlocks)
{
    const size_t perLayer = size_t(numBlocks) * blockSize * m_config.kvDim();
    m_kCache.assign(perLayer * m_config.numLayers, 0.0f);
    m_vCache.assign(perLayer * m_config.numLayers, 0.0f);
}

BackendMemory CpuBackend::memory() const
{
    BackendMemory m;
    m.weightsBytes = m_weights.bytes();
    m.kvCacheBytes = int64_t(m_kCache.size() + m_vCache.size()) * int64_t(sizeof(float));
    m.activationsBytes = int64_t(m_x.capacity() + m_h.capacity() + m_qkv.capacity() + m_q.capacity() +
                                 m_attn.capacity() + m_gateUp.capacity() + m_act.capacity()) * int64_t(sizeof(float));
    return m;
}

void CpuBackend::writeKv(int layer, const float* qkvRows, std::span<const BatchSequence> batch)
{
    const int qDim = m_config.qDim(), kvDim = m_config.kvDim();
    const int rowWidth = qDim + 2 * kvDim;
    const size_t perLayer = size_t(m_numBlocks) * m_blockSize * kvDim;
    float* kLayer = m_kCache.data() + perLayer * layer;
    float* vLayer = m_vCache.data() + perLayer * layer;
    int64_t row = 0;
    for (const BatchSequence& s : batch) {
        for (size_t i = 0; i < s.tokens.size(); ++i, ++row) {
            const int position = s.startPosition + int(i);
            const int32_t block = s.blockTable[position / m_blockSize];
            const size_t slot = (size_t(block) * m_blockSize + position % m_blockSize) * kvDim;
            const float* src = qkvRows + row * rowWidth + qDim;
            std::memcpy(kLayer + slot, src, sizeof(float) * kvDim);
            std::memcpy(vLayer + slot, src + kvDim, sizeof(float) * kvDim);
        }
    }
}

void CpuBackend::forward(std::span<const BatchSequence> batch)
{
    const ModelConfig& c = m_config;
    const int H = c.hiddenSize, HD = c.headDim, NH = c.numHeads, KVH = c.numKvHeads, I = c.intermediateSize;
    const int qDim = c.qDim(), kvDim = c.kvDim(), rowWidth = qDim + 2 * kvDim;
    const float eps = float(c.rmsNormEps);
    int T = 0;
    for (const auto& s : batch) T += int(s.tokens.size());

    m_x.resize(size_t(T) * H);            // [T, H] residual stream
    m_h.resize(size_t(T) * H);            // [T, H] normed
    m_qkv.resize(size_t(T) * rowWidth);   // [T, NH*HD + 2*KVH*HD]
    m_q.resize(size_t(T) * qDim);         // [T, NH, HD] roped queries
    m_attn.resize(size_t(T) * qDim);      // [T, NH, HD]
    m_gateUp.resize(size_t(T) * 2 * I);   // [T, 2I]
    m_act.resize(size_t(T) * I);          // [T, I]

    {
        int64_t row = 0;
        for (const auto& s : batch)
            for (int32_t id : s.tokens)
                std::memcpy(&m_x[row++ * H], &m_weights.embedding[size_t(id) * H], sizeof(float) * H);
    }

    const size_t perLayer = size_t(m_numBlocks) * m_blockSize * kvDim;
    for (int layer = 0; layer < c.numLayers; ++layer) {
        const CpuLayerWeights& w = m_weights.layers[layer];
        rmsnorm(m_x.data(), w.inputNorm.data(), m_h.data(), T, H, eps);
        linear(m_h.data(), w.qkv.data(), m_qkv.data(), T, H, rowWidth);

        // RoPE on q (copied out) and on k in place, at each token's own position.
        int64_t row = 0;
        for (const auto& s : batch) {
            for (size_t i = 0; i < s.tokens.size(); ++i, ++row) {
                const int position = s.startPosition + int(i);
                float* qkvRow = &m_qkv[row * rowWidth];
                std::memcpy(&m_q[row * qDim], qkvRow, sizeof(float) * qDim);
                ropeInterleavedHeads(&m_q[row * qDim], NH, HD, position, c.ropeTheta);
                ropeInterleavedHeads(qkvRow + qDim, KVH, HD, position, c.ropeTheta);
            }
        }
        writeKv(layer, m_qkv.data(), batch);

        const PagedKv kv{m_kCache.data() + perLayer * layer, m_vCache.data() + perLayer * layer, m_blockSize, KVH, HD};
        row = 0;
        for (const auto& s : batch) {
            const int n = int(s.tokens.size());
            pagedAttention(&m_q[row * qDim], &m_attn[row * qDim], n, NH, s.startPosition, s.blockTable, kv);
            row += n;
        }

        linear(m_attn.data(), w.o.data(), m_h.data(), T, qDim, H);
        for (size_t i = 0; i < m_x.size(); ++i) m_x[i] += m_h[i];

        rmsnorm(m_x.data(), w.postNorm.data(), m_h.data(), T, H, eps);
        linear(m_h.data(), w.gateUp.data(), m_gateUp.data(), T, H, 2 * I);
        siluMul(m_gateUp.data(), m_act.data(), T, I);
        linear(m_act.data(), w.down.data(), m_h.data(), T, I, H);
        for (size_t i = 0; i < m_x.size(); ++i) m_x[i] += m_h[i];
    }

    // Only the last token of a sampled sequence needs the final norm and the head.
    m_sampledHidden.clear();
    int64_t row = 0;
    for (const auto& s : batch) {
        row += int64_t(s.tokens.size());
        if (!s.sample) continue;
        const size_t offset = m_sampledHidden.size();
        m_sampledHidden.resize(offset + H);
        rmsnorm(&m_x[(row - 1) * H], m_weights.finalNorm.data(), &m_sampledHidden[offset], 1, H, eps);
    }
}

std::vector<float> CpuBackend::logits(std::span<const BatchSequence> batch)
{
    forward(batch);
    const int H = m_config.hiddenSize, V = m_config.vocabSize;
    const int S = int(m_sampledHidden.size() / H);
    std::vector<float> out(size_t(S) * V);
    linear(m_sampledHidden.data(), m_weights.lmHead, out.data(), S, H, V);
    return out;
}

std::vector<SampleResult> CpuBackend::step(std::span<const BatchSequence> batch)
{
    std::vector<float> rows = logits(batch);
    const int V = m_config.vocabSize;
    std::vector<SampleResult> results;
    size_t r = 0;
    for (const auto& s : batch) {
        if (!s.sample) continue;
        results.push_back(Sampler::sample(std::span<float>(&rows[r * V], size_t(V)), s.sampling));
        ++r;
    }
    return results;
}

} // namespace brook::cpu
