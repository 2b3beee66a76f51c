// Chooses the quantization of a load (config.json x --quantization) and builds each layer's
// fused QuantizedWeights from AWQ tensors or, by round-to-nearest, from dense ones. The fusion
// order (q|k|v, gate|up) matches the dense backends' fused weights.
#include "engine/quantized_layer_loader.h"

#include "engine/awq_format.h"

#include <array>
#include <string>
#include <vector>

namespace brook {

namespace {

constexpr int kRtnGroupSize = 128;

struct LinearSpec {
    std::string prefix;  // "model.layers.<i>.self_attn.q_proj"
    int rows;            // N
    int cols;            // K
};

Result<QuantizedWeight> loadLinear(const Checkpoint& checkpoint, const LinearSpec& linear, const QuantizationSpec& spec)
{
    if (spec.fromCheckpoint) {
        auto qweight = checkpoint.require(linear.prefix + ".qweight");
        if (!qweight) return qweight.failure();
        auto qzeros = checkpoint.require(linear.prefix + ".qzeros");
        if (!qzeros) return qzeros.failure();
        auto scales = checkpoint.require(linear.prefix + ".scales");
        if (!scales) return scales.failure();
        return fromAwqGemm(**qweight, **qzeros, **scales, linear.rows, linear.cols, spec.bits, spec.groupSize,
                           linear.prefix);
    }
    auto dense = checkpoint.require(linear.prefix + ".weight");
    if (!dense) return dense.failure();
    const TensorView& t = **dense;
    if (!isFloatDType(t.dtype) || t.shape != std::vector<int64_t>{linear.rows, linear.cols})
        return makeError(t.file + ": tensor '" + t.name + "' is " + dtypeName(t.dtype) + " " + shapeToString(t.shape) +
                         ", expected a float [" + std::to_string(linear.rows) + ", " + std::to_string(linear.cols) +
                         "]");
    std::vector<float> w(size_t(t.numElements()));
    convertToFloat32(t, w.data());
    auto q = quantizeRtn(w, linear.rows, linear.cols, spec.bits, spec.groupSize);
    if (!q) return makeError(t.file + ": tensor '" + t.name + "': " + q.error());
    return q;
}

}  // namespace

std::string QuantizationSpec::describe() const
{
    if (!enabled()) return "none (dense weights)";
    const std::string group = ", group " + std::to_string(groupSize);
    if (fromCheckpoint) return "awq " + std::to_string(bits) + "-bit" + group;
    return "int" + std::to_string(bits) + " (RTN at load)" + group;
}

Result<QuantizationSpec> resolveQuantization(const ModelConfig& config, const std::string& flag)
{
    if (flag != "" && flag != "int4" && flag != "int8" && flag != "awq")
        return makeError("--quantization must be int4, int8 or awq, got '" + flag + "'");
    QuantizationSpec spec;
    if (config.quantization) {
        const QuantizationConfig& q = *config.quantization;
        if (flag == "int4" || flag == "int8")
            return makeError("--quantization " + flag +
                             " cannot re-quantize an AWQ checkpoint (config.json "
                             "quantization_config: " +
                             q.method + " " + std::to_string(q.bits) + "-bit, group " + std::to_string(q.groupSize) +
                             "); leave --quantization out or pass awq");
        spec.bits = q.bits;
        spec.groupSize = q.groupSize;
        spec.fromCheckpoint = true;
        return spec;
    }
    if (flag.empty()) return spec;
    if (flag == "awq")
        return makeError("--quantization awq needs an AWQ checkpoint, but config.json has no quantization_config; "
                         "use int4 or int8 to quantize this model at load, or convert it with brook-quantize");
    spec.bits = flag == "int4" ? 4 : 8;
    spec.groupSize = kRtnGroupSize;
    for (auto [what, k] :
         {std::pair{"hidden_size", config.hiddenSize}, std::pair{"intermediate_size", config.intermediateSize},
          std::pair{"num_attention_heads * head_dim", config.qDim()}}) {
        if (k % spec.groupSize != 0)
            return makeError("--quantization " + flag + ": the group size " + std::to_string(spec.groupSize) +
                             " does not divide the model's " + what + " " + std::to_string(k));
    }
    return spec;
}

Result<QuantizedLayer> loadQuantizedLayer(const Checkpoint& checkpoint, const ModelConfig& config, int layer,
                                          const QuantizationSpec& spec)
{
    if (!spec.enabled()) return makeError("loadQuantizedLayer: no quantization requested");
    const int H = config.hiddenSize, I = config.intermediateSize, Q = config.qDim(), KV = config.kvDim();
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    // q, k, v, o, gate, up, down as [N out, K in].
    const std::array<LinearSpec, 7> linears = {{{p + "self_attn.q_proj", Q, H},
                                                {p + "self_attn.k_proj", KV, H},
                                                {p + "self_attn.v_proj", KV, H},
                                                {p + "self_attn.o_proj", H, Q},
                                                {p + "mlp.gate_proj", I, H},
                                                {p + "mlp.up_proj", I, H},
                                                {p + "mlp.down_proj", H, I}}};
    std::array<QuantizedWeight, 7> w;
    for (size_t i = 0; i < linears.size(); ++i) {
        auto q = loadLinear(checkpoint, linears[i], spec);
        if (!q) return q.failure();
        w[i] = std::move(q).value();
    }
    QuantizedLayer out;
    auto qkv = concatRows(std::span<const QuantizedWeight>(w.data(), 3));
    if (!qkv) return makeError(p + "self_attn: " + qkv.error());
    out.qkv = std::move(qkv).value();
    out.o = std::move(w[3]);
    auto gateUp = concatRows(std::span<const QuantizedWeight>(w.data() + 4, 2));
    if (!gateUp) return makeError(p + "mlp: " + gateUp.error());
    out.gateUp = std::move(gateUp).value();
    out.down = std::move(w[6]);
    return out;
}

}  // namespace brook
