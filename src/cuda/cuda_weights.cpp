#include "cuda/cuda_weights.h"

#include "cuda/cuda_check.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <string>

namespace brook::cuda {

namespace {

// Converts one tensor to the element type into a host staging buffer.
template <typename T>
void convertInto(const TensorView& tensor, T* dst, std::vector<float>& scratch)
{
    scratch.resize(size_t(tensor.numElements()));
    convertToFloat32(tensor, scratch.data());
    for (size_t i = 0; i < scratch.size(); ++i) dst[i] = fromFloat<T>(scratch[i]);
}

}  // namespace

Result<CudaWeights> CudaWeights::upload(const Checkpoint& checkpoint, const ModelConfig& config, ElementType type,
                                        const std::function<void(double)>& progress,
                                        const QuantizationSpec& quantization)
{
    const bool quantized = quantization.enabled();
    // Plan: a list of (destination slot, source tensors appended in order).
    struct Slot {
        std::vector<std::string> tensors;
        const void** target;
        size_t offset = 0;
        size_t elements = 0;
    };
    CudaWeights w;
    w.m_layers.resize(config.numLayers);
    std::vector<Slot> slots;
    slots.push_back({{"model.embed_tokens.weight"}, &w.m_embedding});
    slots.push_back({{"model.norm.weight"}, &w.m_finalNorm});
    const bool separateHead = checkpoint.find("lm_head.weight") != nullptr;
    if (separateHead) slots.push_back({{"lm_head.weight"}, &w.m_lmHead});
    for (int i = 0; i < config.numLayers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        CudaLayerWeights& l = w.m_layers[i];
        slots.push_back({{p + "input_layernorm.weight"}, &l.inputNorm});
        slots.push_back({{p + "post_attention_layernorm.weight"}, &l.postNorm});
        if (quantized) continue;  // the Linears come from loadQuantizedLayer below
        slots.push_back(
            {{p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight", p + "self_attn.v_proj.weight"}, &l.qkv});
        slots.push_back({{p + "self_attn.o_proj.weight"}, &l.o});
        slots.push_back({{p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"}, &l.gateUp});
        slots.push_back({{p + "mlp.down_proj.weight"}, &l.down});
    }
    const size_t elementBytes = 2;
    size_t total = 0;
    for (Slot& s : slots) {
        s.offset = total;
        for (const std::string& name : s.tensors) {
            auto t = checkpoint.require(name);
            if (!t) return t.failure();
            s.elements += size_t((*t)->numElements());
        }
        // 256-byte alignment keeps every matrix aligned for vector loads and cuBLASLt.
        total += (s.elements * elementBytes + 255) / 256 * 256;
    }
    // Quantized Linears: read (and, for --quantization int4|int8, quantized) on the host one
    // layer at a time, placed after the float tensors.
    std::vector<QuantizedLayer> layers;
    std::vector<size_t> layerOffsets;
    if (quantized) {
        for (int i = 0; i < config.numLayers; ++i) {
            auto layer = loadQuantizedLayer(checkpoint, config, i, quantization);
            if (!layer) return layer.failure();
            layerOffsets.push_back(total);
            for (const QuantizedWeight* q : {&layer->qkv, &layer->o, &layer->gateUp, &layer->down})
                total += (quantized_weight_device_bytes(*q) + 255) / 256 * 256;
            layers.push_back(std::move(layer).value());
            if (progress) progress(0.5 * double(i + 1) / config.numLayers);
        }
    }
    w.m_storage = DeviceBuffer(total);
    auto* base = static_cast<std::byte*>(w.m_storage.get());
    for (size_t i = 0; i < layers.size(); ++i) {
        CudaLayerWeights& l = w.m_layers[i];
        l.quantized = true;
        size_t offset = layerOffsets[i];
        QuantDeviceWeight* targets[] = {&l.qkvQ, &l.oQ, &l.gateUpQ, &l.downQ};
        const QuantizedWeight* sources[] = {&layers[i].qkv, &layers[i].o, &layers[i].gateUp, &layers[i].down};
        for (int j = 0; j < 4; ++j) {
            *targets[j] = upload_quantized_weight(*sources[j], base + offset);
            if (!quant_matmul_supported(*targets[j]))
                return makeError("the CUDA quantized kernels do not support this layout (bits " +
                                 std::to_string(sources[j]->bits) + ", group " + std::to_string(sources[j]->groupSize) +
                                 ", K " + std::to_string(sources[j]->cols) + ")");
            offset += (quantized_weight_device_bytes(*sources[j]) + 255) / 256 * 256;
        }
    }
    layers.clear();

    // Convert on the host one slot at a time into a pinned staging buffer, then copy.
    std::vector<float> scratch;
    std::vector<std::byte> staging;
    for (Slot& s : slots) {
        staging.resize(s.elements * elementBytes);
        size_t done = 0;
        for (const std::string& name : s.tensors) {
            const TensorView* t = *checkpoint.require(name);
            BROOK_DISPATCH_ELEMENT_TYPE(type, E,
                                        { convertInto<E>(*t, reinterpret_cast<E*>(staging.data()) + done, scratch); });
            done += size_t(t->numElements());
        }
        BROOK_CUDA_CHECK(cudaMemcpy(base + s.offset, staging.data(), staging.size(), cudaMemcpyHostToDevice));
        *s.target = base + s.offset;
        if (progress)
            progress((quantized ? 0.5 : 0.0) +
                     (quantized ? 0.5 : 1.0) * double(&s - slots.data() + 1) / double(slots.size()));
    }
    if (!separateHead) w.m_lmHead = w.m_embedding;
    spdlog::info("CUDA backend: {:.1f} MiB of {} weights uploaded{}", double(total) / (1 << 20), elementTypeName(type),
                 quantized ? ", Linears " + quantization.describe() : std::string());
    return w;
}

}  // namespace brook::cuda
