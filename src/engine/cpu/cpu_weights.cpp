#include "engine/cpu/cpu_weights.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>
#include <string>

namespace brook::cpu {

namespace {

// Appends `name`'s values (converted to fp32) to `dst`.
Result<void> appendTensor(const Checkpoint& checkpoint, const std::string& name, std::vector<float>& dst)
{
    auto tensor = checkpoint.require(name);
    if (!tensor) return tensor.failure();
    const size_t offset = dst.size();
    dst.resize(offset + size_t((*tensor)->numElements()));
    convertToFloat32(**tensor, dst.data() + offset);
    return {};
}

}  // namespace

int64_t CpuWeights::bytes() const
{
    int64_t n = int64_t(embedding.size() + lmHeadStorage.size() + finalNorm.size());
    for (const auto& l : layers)
        n += int64_t(l.inputNorm.size() + l.qkv.size() + l.o.size() + l.postNorm.size() + l.gateUp.size() +
                     l.down.size());
    return n * int64_t(sizeof(float));
}

// Replaces a layer's fused fp32 Linears by the dequantized QuantizedWeights.
Result<void> loadDequantizedLayer(const Checkpoint& checkpoint, const ModelConfig& config, int layer,
                                  const QuantizationSpec& spec, CpuLayerWeights& l)
{
    auto q = loadQuantizedLayer(checkpoint, config, layer, spec);
    if (!q) return q.failure();
    const std::pair<const QuantizedWeight*, std::vector<float>*> parts[] = {
        {&q->qkv, &l.qkv}, {&q->o, &l.o}, {&q->gateUp, &l.gateUp}, {&q->down, &l.down}};
    for (const auto& [weight, dst] : parts) {
        dst->resize(size_t(weight->rows) * size_t(weight->cols));
        dequantize(*weight, *dst);
    }
    return {};
}

Result<CpuWeights> CpuWeights::load(const Checkpoint& checkpoint, const ModelConfig& config,
                                    const std::function<void(double)>& progress, const QuantizationSpec& quantization)
{
    CpuWeights w;
    const bool quantized = quantization.enabled();
    if (quantized) spdlog::info("CPU backend: quantization {}, dequantized to fp32", quantization.describe());
    std::vector<std::pair<std::string, std::vector<float>*>> plan;
    plan.push_back({"model.embed_tokens.weight", &w.embedding});
    plan.push_back({"model.norm.weight", &w.finalNorm});
    w.layers.resize(config.numLayers);
    for (int i = 0; i < config.numLayers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        CpuLayerWeights& l = w.layers[i];
        plan.push_back({p + "input_layernorm.weight", &l.inputNorm});
        plan.push_back({p + "post_attention_layernorm.weight", &l.postNorm});
        if (quantized) continue;  // the Linears come from loadDequantizedLayer below
        plan.push_back({p + "self_attn.q_proj.weight", &l.qkv});
        plan.push_back({p + "self_attn.k_proj.weight", &l.qkv});
        plan.push_back({p + "self_attn.v_proj.weight", &l.qkv});
        plan.push_back({p + "self_attn.o_proj.weight", &l.o});
        plan.push_back({p + "mlp.gate_proj.weight", &l.gateUp});
        plan.push_back({p + "mlp.up_proj.weight", &l.gateUp});
        plan.push_back({p + "mlp.down_proj.weight", &l.down});
    }
    // Layers are independent: convert them in parallel (bf16 -> fp32 of 360M values).
    std::vector<std::string> errors(plan.size());
    // Fused targets must be appended in order, so parallelise over destinations, not tensors.
    std::vector<std::vector<size_t>> byDestination;
    std::vector<std::vector<float>*> destinations;
    for (size_t i = 0; i < plan.size(); ++i) {
        if (destinations.empty() || destinations.back() != plan[i].second) {
            destinations.push_back(plan[i].second);
            byDestination.emplace_back();
        }
        byDestination.back().push_back(i);
    }
    // Work items: the destinations, then (quantized) one item per layer's Linears.
    const size_t layerItems = quantized ? size_t(config.numLayers) : 0;
    const size_t items = byDestination.size() + layerItems;
    std::vector<std::string> layerErrors(layerItems);
    std::atomic<size_t> converted{0};
    std::mutex progressMutex;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t d = 0; d < items; ++d) {
        if (d < byDestination.size()) {
            for (size_t i : byDestination[d]) {
                auto r = appendTensor(checkpoint, plan[i].first, *plan[i].second);
                if (!r) {
                    errors[i] = r.error();
                    break;
                }
            }
        } else {
            const int layer = int(d - byDestination.size());
            auto r = loadDequantizedLayer(checkpoint, config, layer, quantization, w.layers[size_t(layer)]);
            if (!r) layerErrors[size_t(layer)] = r.error();
        }
        const size_t done = ++converted;
        if (progress && progressMutex.try_lock()) {  // never make a converting thread wait
            progress(double(done) / double(items));
            progressMutex.unlock();
        }
    }
    for (const auto& e : errors)
        if (!e.empty()) return makeError(e);
    for (const auto& e : layerErrors)
        if (!e.empty()) return makeError(e);

    // The tied-head rule (shared docs): lm_head.weight when the checkpoint has it, else the
    // embedding. Validation already required it for untied models.
    if (const TensorView* head = checkpoint.find("lm_head.weight")) {
        w.lmHeadStorage.resize(size_t(head->numElements()));
        convertToFloat32(*head, w.lmHeadStorage.data());
        w.lmHead = w.lmHeadStorage.data();
    } else {
        w.lmHead = w.embedding.data();
    }
    spdlog::info("CPU backend: {:.1f} MiB of fp32 weights", double(w.bytes()) / (1 << 20));
    return w;
}

}  // namespace brook::cpu
