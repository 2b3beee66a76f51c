#include "engine/cpu/cpu_model_weights.h"

#include "engine/models/model_family.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace brook::cpu {

namespace {

// The row-wise concatenation of `names` (all [n_i, K]) as one CpuMatrix: bf16 when every part is
// bf16, else fp32 (fp16 and fp32 widen exactly).
Result<CpuMatrix> loadMatrix(const Checkpoint& checkpoint, const std::vector<std::string>& names)
{
    std::vector<const TensorView*> parts;
    int rows = 0;
    bool allBf16 = true;
    for (const auto& name : names) {
        auto t = checkpoint.require(name);
        if (!t) return t.failure();
        parts.push_back(*t);
        rows += int((*t)->shape.at(0));
        allBf16 = allBf16 && (*t)->dtype == DType::BF16;
    }
    const int cols = int(parts.front()->shape.size() > 1 ? parts.front()->shape[1] : 1);
    if (allBf16) {
        // Row n of the fused matrix: find its part, copy its raw bf16 bits.
        return CpuMatrix::fromBf16(rows, cols, [&](int n, uint16_t* row) {
            for (const TensorView* part : parts) {
                const int partRows = int(part->shape[0]);
                if (n < partRows) {
                    std::memcpy(row, part->data + size_t(n) * size_t(cols) * 2, size_t(cols) * 2);
                    return;
                }
                n -= partRows;
            }
        });
    }
    std::vector<float> values(size_t(rows) * size_t(cols));
    size_t offset = 0;
    for (const TensorView* part : parts) {
        convertToFloat32(*part, values.data() + offset);
        offset += size_t(part->numElements());
    }
    return CpuMatrix::fromF32(rows, cols, std::move(values));
}

Result<std::vector<float>> loadVector(const Checkpoint& checkpoint, const std::string& name)
{
    auto t = checkpoint.require(name);
    if (!t) return t.failure();
    std::vector<float> v(size_t((*t)->numElements()));
    convertToFloat32(**t, v.data());
    return v;
}

CpuMatrix fromQuantized(const QuantizedWeight& w)
{
    if (CpuMatrix::q8Supported(w)) return CpuMatrix::fromQ8(w);
    if (CpuMatrix::q4Supported(w)) return CpuMatrix::fromQ4(w);
    // Groups that are not multiples of 32 (the activations' block): no CPU kernel, so the
    // dequantized values (what the W4A16 GPU kernel computes).
    std::vector<float> values(size_t(w.rows) * size_t(w.cols));
    dequantize(w, values);
    return CpuMatrix::fromF32(w.rows, w.cols, std::move(values));
}

// Whether --quantization int8 also makes the embedding / lm head int8. It is a third of the
// model's weights and, tied, read whole by every decode step: bf16 it kept int8 models at 0.48 GB
// and half their step time in the head. BROOK_CPU_INT8_HEAD=0 keeps it bf16 (exact logits for
// the int8 layers' hidden state; the fallback when a model's head proves sensitive).
bool int8Head()
{
    const char* v = std::getenv("BROOK_CPU_INT8_HEAD");
    return !(v && std::string(v) == "0");
}

// m (bf16 or fp32, [V, H]) rounded to 8-bit groups as --quantization int8 rounds the Linears
// (quantizeRtn), a chunk of rows at a time so the fp32 copy stays small.
Result<CpuMatrix> quantizeMatrix(const CpuMatrix& m, int groupSize)
{
    constexpr int kChunkRows = 4096;
    std::vector<QuantizedWeight> parts;
    std::vector<float> rows;
    for (int r0 = 0; r0 < m.rows(); r0 += kChunkRows) {
        const int n = std::min(kChunkRows, m.rows() - r0);
        rows.resize(size_t(n) * size_t(m.cols()));
        for (int r = 0; r < n; ++r) m.rowToFloat(r0 + r, &rows[size_t(r) * size_t(m.cols())]);
        auto q = quantizeRtn(rows, n, m.cols(), 8, groupSize);
        if (!q) return q.failure();
        parts.push_back(std::move(q).value());
    }
    auto all = concatRows(parts);
    if (!all) return all.failure();
    if (!CpuMatrix::q8Supported(*all)) return makeError("int8 embedding: group size must be a multiple of 32");
    return CpuMatrix::fromQ8(*all);
}

Result<void> loadLayer(const Checkpoint& checkpoint, const ModelConfig& config, int layer,
                       const QuantizationSpec& quantization, CpuModelLayer& l)
{
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    auto inputNorm = loadVector(checkpoint, p + "input_layernorm.weight");
    if (!inputNorm) return inputNorm.failure();
    auto postNorm = loadVector(checkpoint, p + "post_attention_layernorm.weight");
    if (!postNorm) return postNorm.failure();
    l.inputNorm = std::move(inputNorm).value();
    l.postNorm = std::move(postNorm).value();
    if (familyOf(config).qkNorm) {
        auto qNorm = loadVector(checkpoint, p + "self_attn.q_norm.weight");
        if (!qNorm) return qNorm.failure();
        auto kNorm = loadVector(checkpoint, p + "self_attn.k_norm.weight");
        if (!kNorm) return kNorm.failure();
        l.qNorm = std::move(qNorm).value();
        l.kNorm = std::move(kNorm).value();
    }
    if (quantization.enabled()) {
        auto q = loadQuantizedLayer(checkpoint, config, layer, quantization);
        if (!q) return q.failure();
        l.qkv = fromQuantized(q->qkv);
        l.o = fromQuantized(q->o);
        l.gateUp = fromQuantized(q->gateUp);
        l.down = fromQuantized(q->down);
        return {};
    }
    const std::pair<CpuMatrix*, std::vector<std::string>> plan[] = {
        {&l.qkv, {p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight", p + "self_attn.v_proj.weight"}},
        {&l.o, {p + "self_attn.o_proj.weight"}},
        {&l.gateUp, {p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"}},
        {&l.down, {p + "mlp.down_proj.weight"}},
    };
    for (const auto& [dst, names] : plan) {
        auto m = loadMatrix(checkpoint, names);
        if (!m) return m.failure();
        *dst = std::move(m).value();
    }
    return {};
}

}  // namespace

int64_t CpuModelWeights::bytes() const
{
    int64_t n = embedding.bytes() + lmHeadStorage.bytes() + int64_t(finalNorm.size() * sizeof(float));
    for (const auto& l : layers)
        n += l.qkv.bytes() + l.o.bytes() + l.gateUp.bytes() + l.down.bytes() +
             int64_t((l.inputNorm.size() + l.postNorm.size() + l.qNorm.size() + l.kNorm.size()) * sizeof(float));
    return n;
}

std::string CpuModelWeights::describe() const
{
    std::string linear =
        layers.empty() ? matrixFormatName(embedding.format()) : matrixFormatName(layers[0].qkv.format());
    const std::string embed = matrixFormatName(embedding.format());
    return linear == embed ? linear : linear + " linears, " + embed + " embedding";
}

Result<CpuModelWeights> CpuModelWeights::load(const Checkpoint& checkpoint, const ModelConfig& config,
                                              const std::function<void(double)>& progress,
                                              const QuantizationSpec& quantization)
{
    CpuModelWeights w;
    w.layers.resize(size_t(config.numLayers));
    // Work items: one per layer, then the embedding, the final norm and the untied head.
    const int items = config.numLayers + 3;
    std::vector<std::string> errors(static_cast<size_t>(items));
    std::atomic<int> done{0};
    std::mutex progressMutex;
    // An int4 model's head is int8 too: llama.cpp's 4-bit files also keep the output matrix at
    // more bits than the layers, since the logits see every rounding of it.
    const bool quantizeHead = quantization.enabled() && (quantization.bits == 8 || quantization.bits == 4) &&
                              quantization.groupSize % CpuMatrix::kQ8Block == 0 && int8Head();
#pragma omp parallel for schedule(dynamic, 1)
    for (int item = 0; item < items; ++item) {
        Result<void> r;
        if (item < config.numLayers) {
            r = loadLayer(checkpoint, config, item, quantization, w.layers[size_t(item)]);
        } else if (item == config.numLayers) {
            auto m = loadMatrix(checkpoint, {"model.embed_tokens.weight"});
            if (m && quantizeHead) m = quantizeMatrix(*m, quantization.groupSize);
            if (m) w.embedding = std::move(m).value();
            else r = m.failure();
        } else if (item == config.numLayers + 1) {
            auto v = loadVector(checkpoint, "model.norm.weight");
            if (v) w.finalNorm = std::move(v).value();
            else r = v.failure();
        } else if (checkpoint.find("lm_head.weight")) {
            // The tied-head rule (shared docs): lm_head.weight when the checkpoint has it, else the embedding.
            auto m = loadMatrix(checkpoint, {"lm_head.weight"});
            if (m && quantizeHead) m = quantizeMatrix(*m, quantization.groupSize);
            if (m) w.lmHeadStorage = std::move(m).value();
            else r = m.failure();
        }
        if (!r) errors[size_t(item)] = r.error();
        const int finished = ++done;
        if (progress && progressMutex.try_lock()) {  // never make a loading thread wait
            progress(double(finished) / double(items));
            progressMutex.unlock();
        }
    }
    for (const auto& e : errors)
        if (!e.empty()) return makeError(e);
    w.tiedHead = checkpoint.find("lm_head.weight") == nullptr;
    if (quantization.enabled()) spdlog::info("CPU backend: quantization {}", quantization.describe());
    spdlog::info("CPU backend: {:.1f} MiB of weights ({})", double(w.bytes()) / (1 << 20), w.describe());
    return w;
}

}  // namespace brook::cpu
