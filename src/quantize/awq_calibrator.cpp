// AwqCalibrator: see awq_calibrator.h. The layer arithmetic mirrors CpuBackend::forward (the
// same cpu_ops), but attention runs on whole sequences with two GEMMs per head instead of a
// paged cache, so calibrating over thousands of tokens stays a matter of seconds.
#include "quantize/awq_calibrator.h"

#include "engine/cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace brook {

std::vector<float> LinearInputStats::meanAbs() const
{
    std::vector<float> out(size_t(cols), 0.0f);
    if (count == 0) return out;
    for (int k = 0; k < cols; ++k) out[size_t(k)] = float(absSum[size_t(k)] / double(count));
    return out;
}

namespace {

// Adds rows x [T, K] to the statistics, keeping the rows listed in `sampled`.
void record(LinearInputStats& stats, const float* x, int T, int K, const std::vector<int>& sampled)
{
    if (stats.cols == 0) {
        stats.cols = K;
        stats.absSum.assign(size_t(K), 0.0);
    }
    for (int t = 0; t < T; ++t) {
        const float* row = x + int64_t(t) * K;
        for (int k = 0; k < K; ++k) stats.absSum[size_t(k)] += std::abs(double(row[k]));
    }
    stats.count += T;
    for (int t : sampled) stats.sample.insert(stats.sample.end(), x + int64_t(t) * K, x + int64_t(t + 1) * K);
}

}  // namespace

AwqCalibrator::AwqCalibrator(const ModelConfig& config, const cpu::CpuWeights& weights)
    : m_config(config), m_weights(weights)
{}

void AwqCalibrator::attention(const float* q, const float* qkv, int rowWidth, float* out, int T) const
{
    const int HD = m_config.headDim, NH = m_config.numHeads, KVH = m_config.numKvHeads;
    const int qDim = m_config.qDim(), kvDim = m_config.kvDim();
    const int group = NH / KVH;
    const float scale = 1.0f / std::sqrt(float(HD));
    std::vector<float> kh(size_t(T) * HD);     // [T, HD]
    std::vector<float> vt(size_t(HD) * T);     // [HD, T]: V^T, so P @ V is cpu::linear(P, V^T)
    std::vector<float> qh(size_t(T) * HD);     // [T, HD]
    std::vector<float> scores(size_t(T) * T);  // [T, T]
    std::vector<float> oh(size_t(T) * HD);     // [T, HD]
    for (int kvHead = 0; kvHead < KVH; ++kvHead) {
        for (int t = 0; t < T; ++t) {
            const float* row = qkv + int64_t(t) * rowWidth;
            std::memcpy(&kh[size_t(t) * HD], row + qDim + kvHead * HD, sizeof(float) * HD);
            for (int d = 0; d < HD; ++d) vt[size_t(d) * T + t] = row[qDim + kvDim + kvHead * HD + d];
        }
        for (int h = kvHead * group; h < (kvHead + 1) * group; ++h) {
            for (int t = 0; t < T; ++t)
                std::memcpy(&qh[size_t(t) * HD], q + int64_t(t) * qDim + h * HD, sizeof(float) * HD);
            cpu::linear(qh.data(), kh.data(), scores.data(), T, HD, T);
            for (int i = 0; i < T; ++i) {
                float* row = &scores[size_t(i) * T];
                float maxScore = -INFINITY;
                for (int j = 0; j <= i; ++j) {
                    row[j] *= scale;
                    maxScore = std::max(maxScore, row[j]);
                }
                float sum = 0.0f;
                for (int j = 0; j <= i; ++j) {
                    row[j] = std::exp(row[j] - maxScore);
                    sum += row[j];
                }
                for (int j = 0; j <= i; ++j) row[j] /= sum;
                std::fill(row + i + 1, row + T, 0.0f);  // causal mask
            }
            cpu::linear(scores.data(), vt.data(), oh.data(), T, T, HD);
            for (int t = 0; t < T; ++t)
                std::memcpy(out + int64_t(t) * qDim + h * HD, &oh[size_t(t) * HD], sizeof(float) * HD);
        }
    }
}

void AwqCalibrator::runLayers(std::vector<float>& x, int T, Capture* capture) const
{
    const ModelConfig& c = m_config;
    const int H = c.hiddenSize, HD = c.headDim, NH = c.numHeads, KVH = c.numKvHeads, I = c.intermediateSize;
    const int qDim = c.qDim(), kvDim = c.kvDim(), rowWidth = qDim + 2 * kvDim;
    const float eps = float(c.rmsNormEps);
    std::vector<float> h(size_t(T) * H);           // [T, H] normed
    std::vector<float> qkv(size_t(T) * rowWidth);  // [T, NH*HD + 2*KVH*HD]
    std::vector<float> q(size_t(T) * qDim);        // [T, NH, HD] roped
    std::vector<float> attn(size_t(T) * qDim);     // [T, NH, HD]
    std::vector<float> gateUp(size_t(T) * 2 * I);  // [T, 2I]
    std::vector<float> act(size_t(T) * I);         // [T, I]
    std::vector<float> delta(size_t(T) * H);       // [T, H] a block's residual contribution
    const auto recordInput = [&](int layer, LinearInput which, const float* rows, int K) {
        if (capture) record((*capture->layers)[size_t(layer)][which], rows, T, K, capture->sampledRows);
    };

    for (int layer = 0; layer < c.numLayers; ++layer) {
        const cpu::CpuLayerWeights& w = m_weights.layers[size_t(layer)];
        cpu::rmsnorm(x.data(), w.inputNorm.data(), h.data(), T, H, eps);
        recordInput(layer, LinearInput::Qkv, h.data(), H);
        cpu::linear(h.data(), w.qkv.data(), qkv.data(), T, H, rowWidth);
        for (int t = 0; t < T; ++t) {
            float* row = &qkv[size_t(t) * rowWidth];
            std::memcpy(&q[size_t(t) * qDim], row, sizeof(float) * qDim);
            cpu::ropeInterleavedHeads(&q[size_t(t) * qDim], NH, HD, t, c.ropeTheta);
            cpu::ropeInterleavedHeads(row + qDim, KVH, HD, t, c.ropeTheta);
        }
        attention(q.data(), qkv.data(), rowWidth, attn.data(), T);
        recordInput(layer, LinearInput::O, attn.data(), qDim);
        cpu::linear(attn.data(), w.o.data(), delta.data(), T, qDim, H);
        for (size_t i = 0; i < x.size(); ++i) x[i] += delta[i];

        cpu::rmsnorm(x.data(), w.postNorm.data(), h.data(), T, H, eps);
        recordInput(layer, LinearInput::GateUp, h.data(), H);
        cpu::linear(h.data(), w.gateUp.data(), gateUp.data(), T, H, 2 * I);
        cpu::siluMul(gateUp.data(), act.data(), T, I);
        recordInput(layer, LinearInput::Down, act.data(), I);
        cpu::linear(act.data(), w.down.data(), delta.data(), T, I, H);
        for (size_t i = 0; i < x.size(); ++i) x[i] += delta[i];
    }
}

namespace {

std::vector<float> embed(const cpu::CpuWeights& weights, std::span<const int32_t> tokens, int H)
{
    std::vector<float> x(tokens.size() * size_t(H));  // [T, H]
    for (size_t t = 0; t < tokens.size(); ++t)
        std::memcpy(&x[t * size_t(H)], &weights.embedding[size_t(tokens[t]) * size_t(H)], sizeof(float) * size_t(H));
    return x;
}

}  // namespace

std::vector<float> AwqCalibrator::logits(std::span<const int32_t> tokens) const
{
    const int H = m_config.hiddenSize, V = m_config.vocabSize, T = int(tokens.size());
    std::vector<float> x = embed(m_weights, tokens, H);
    runLayers(x, T, nullptr);
    cpu::rmsnorm(x.data(), m_weights.finalNorm.data(), x.data(), T, H, float(m_config.rmsNormEps));
    std::vector<float> out(size_t(T) * size_t(V));  // [T, V]
    cpu::linear(x.data(), m_weights.lmHead, out.data(), T, H, V);
    return out;
}

std::vector<LayerCalibration> AwqCalibrator::calibrate(std::span<const int32_t> tokens,
                                                       const CalibrationOptions& options,
                                                       const std::function<void(double)>& progress) const
{
    std::vector<LayerCalibration> layers(size_t(m_config.numLayers));
    const int64_t N = int64_t(tokens.size());
    const int64_t S = std::min<int64_t>(options.sampleRows, N);
    const int64_t seqLen = std::max(1, options.sequenceLength);
    for (int64_t start = 0; start < N; start += seqLen) {
        const int T = int(std::min(seqLen, N - start));
        Capture capture;
        capture.layers = &layers;
        // Global row g is kept when floor(g S / N) steps: exactly S rows, evenly spread.
        for (int64_t g = start; g < start + T; ++g)
            if ((g * S) / N != ((g + 1) * S) / N) capture.sampledRows.push_back(int(g - start));
        std::vector<float> x = embed(m_weights, tokens.subspan(size_t(start), size_t(T)), m_config.hiddenSize);
        runLayers(x, T, &capture);
        if (progress) progress(double(start + T) / double(N));
    }
    return layers;
}

}  // namespace brook
