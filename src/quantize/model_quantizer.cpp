// quantizeModel: see model_quantizer.h. AWQ follows AutoAWQ's order: the statistics come from
// the dense fp32 model (scaling is exact in fp32, so one forward serves every layer), each
// layer's four scales are searched on its unscaled weights, all four are folded, and only
// then are the layer's Linears quantized.
#include "quantize/model_quantizer.h"

#include "quantize/awq_search.h"
#include "engine/cpu/cpu_weights.h"
#include "engine/models/model_family.h"
#include "engine/model_folder.h"
#include "engine/quantized_weight.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>

namespace brook {

namespace {

using Clock = std::chrono::steady_clock;

Result<void> checkFolders(const std::filesystem::path& modelDir, const std::filesystem::path& outDir, bool force)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(modelDir, ec))
        return makeError(modelDir.string() + ": model folder does not exist");
    if (std::filesystem::exists(outDir, ec)) {
        if (!std::filesystem::is_directory(outDir, ec))
            return makeError(outDir.string() + ": exists and is not a folder");
        if (std::filesystem::equivalent(modelDir, outDir, ec))
            return makeError(outDir.string() + ": the output folder must differ from the model folder");
        if (!std::filesystem::is_empty(outDir, ec) && !force)
            return makeError(outDir.string() + ": output folder is not empty (use --force to write into it)");
    }
    return {};
}

Result<void> checkShapes(const ModelConfig& c, int bits, int groupSize)
{
    for (auto [what, k] :
         {std::pair{"hidden_size", c.hiddenSize}, std::pair{"num_attention_heads * head_dim", c.qDim()},
          std::pair{"intermediate_size", c.intermediateSize}}) {
        if (k % groupSize != 0)
            return makeError("--group-size " + std::to_string(groupSize) + " does not divide " + what + " " +
                             std::to_string(k) + " (a Linear's input features)");
    }
    const int perWord = 32 / bits;
    for (auto [what, n] :
         {std::pair{"hidden_size", c.hiddenSize}, std::pair{"num_attention_heads * head_dim", c.qDim()},
          std::pair{"num_key_value_heads * head_dim", c.kvDim()}, std::pair{"intermediate_size", c.intermediateSize}}) {
        if (n % perWord != 0)
            return makeError(std::string(what) + " " + std::to_string(n) + " is not a multiple of " +
                             std::to_string(perWord) + " (AWQ packs " + std::to_string(perWord) + " values per int32)");
    }
    return {};
}

// One Linear inside a layer's fused matrices, with the AWQ scales applied to it.
struct LinearSlice {
    std::string name;  // "self_attn.q_proj"
    std::vector<float> cpu::CpuLayerWeights::*matrix;
    int firstRow, rows, cols;
    LinearInput input;                   // whose search result it shares
    const std::vector<float>* colScale;  // multiplied into its columns (empty: none)
    const std::vector<float>* rowScale;  // divided out of its rows (empty: none)
};

std::vector<LinearSlice> layerSlices(const ModelConfig& c, const AwqLayerScales& s)
{
    const int H = c.hiddenSize, I = c.intermediateSize, qDim = c.qDim(), kvDim = c.kvDim();
    using W = cpu::CpuLayerWeights;
    static const std::vector<float> none;
    return {
        {"self_attn.q_proj", &W::qkv, 0, qDim, H, LinearInput::Qkv, &s.qkv, &none},
        {"self_attn.k_proj", &W::qkv, qDim, kvDim, H, LinearInput::Qkv, &s.qkv, &none},
        {"self_attn.v_proj", &W::qkv, qDim + kvDim, kvDim, H, LinearInput::Qkv, &s.qkv, &s.o},
        {"self_attn.o_proj", &W::o, 0, H, qDim, LinearInput::O, &s.o, &none},
        {"mlp.gate_proj", &W::gateUp, 0, I, H, LinearInput::GateUp, &s.gateUp, &none},
        {"mlp.up_proj", &W::gateUp, I, I, H, LinearInput::GateUp, &s.gateUp, &s.down},
        {"mlp.down_proj", &W::down, 0, H, I, LinearInput::Down, &s.down, &none},
    };
}

std::span<const float> rowsOf(const std::vector<float>& matrix, int firstRow, int rows, int cols)
{
    return std::span<const float>(matrix).subspan(size_t(firstRow) * size_t(cols), size_t(rows) * size_t(cols));
}

// ||W - W_eff||_F / ||W||_F with W_eff = diag(rowScale) deq(q) diag(1/colScale).
double weightError(std::span<const float> original, const QuantizedWeight& q, const std::vector<float>& colScale,
                   const std::vector<float>& rowScale)
{
    std::vector<float> effective(size_t(q.rows) * size_t(q.cols));
    dequantize(q, effective);
    double diff = 0.0, norm = 0.0;
    for (int n = 0; n < q.rows; ++n) {
        for (int k = 0; k < q.cols; ++k) {
            const size_t i = size_t(n) * size_t(q.cols) + size_t(k);
            double e = effective[i];
            if (!colScale.empty()) e /= colScale[size_t(k)];
            if (!rowScale.empty()) e *= rowScale[size_t(n)];
            const double w = original[i];
            diff += (w - e) * (w - e);
            norm += w * w;
        }
    }
    return norm > 0.0 ? std::sqrt(diff / norm) : 0.0;
}

// Searches the four scales of one layer on its unscaled weights.
Result<std::array<AwqScaleResult, kLinearInputCount>> searchLayer(const ModelConfig& c, const cpu::CpuLayerWeights& w,
                                                                  const LayerCalibration& stats,
                                                                  const AwqSearch& search, int layer)
{
    const int H = c.hiddenSize, I = c.intermediateSize, qDim = c.qDim(), kvDim = c.kvDim();
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    struct Group {
        LinearInput input;
        const std::vector<float>* weight;
        int rows, cols;
        std::string name;
    };
    const Group groups[] = {{LinearInput::Qkv, &w.qkv, qDim + 2 * kvDim, H, p + "self_attn.{q,k,v}_proj"},
                            {LinearInput::O, &w.o, H, qDim, p + "self_attn.o_proj"},
                            {LinearInput::GateUp, &w.gateUp, 2 * I, H, p + "mlp.{gate,up}_proj"},
                            {LinearInput::Down, &w.down, H, I, p + "mlp.down_proj"}};
    std::array<AwqScaleResult, kLinearInputCount> results;
    for (const Group& g : groups) {
        const LinearInputStats& in = stats[g.input];
        const std::vector<float> meanAbs = in.meanAbs();
        auto r = search.search(*g.weight, g.rows, g.cols, in.sample, meanAbs, g.name);
        if (!r) return r.failure();
        results[size_t(g.input)] = std::move(r).value();
    }
    return results;
}

}  // namespace

Result<ModelQuantizerResult> quantizeModel(const std::filesystem::path& modelDir, const std::filesystem::path& outDir,
                                           const ModelQuantizerOptions& options)
{
    const auto start = Clock::now();
    const bool awq = options.method == "awq";
    if (!awq && options.method != "rtn") return makeError("--method must be awq or rtn, not '" + options.method + "'");
    if (options.bits != 4 && options.bits != 8)
        return makeError("--bits must be 4 or 8, not " + std::to_string(options.bits));
    if (options.groupSize <= 0 || options.groupSize % 2 != 0)
        return makeError("--group-size must be a positive even number, not " + std::to_string(options.groupSize));
    if (auto ok = checkFolders(modelDir, outDir, options.force); !ok) return ok.failure();

    auto folder = ModelFolder::load(modelDir);
    if (!folder) return folder.failure();
    const ModelConfig& c = folder->config;
    if (c.quantization)
        return makeError(modelDir.string() + ": config.json has a quantization_config: the model is already quantized");
    // The calibration forward (awq_calibrator.cpp) is ERNIE-4.5's layer: neighbour-pair RoPE, no
    // q/k norms. RTN needs no forward and works for every family.
    if (awq && (familyOf(c).ropePairing != RopePairing::Neighbours || familyOf(c).qkNorm))
        return makeError(modelDir.string() + ": --method awq calibrates ERNIE-4.5 models only; " +
                         std::string(familyOf(c).name) + " can be quantized with --method rtn");
    if (auto ok = checkShapes(c, options.bits, options.groupSize); !ok)
        return makeError(modelDir.string() + ": " + ok.error());

    spdlog::info("loading {} as fp32", modelDir.string());
    auto loaded = cpu::CpuWeights::load(*folder->checkpoint, c);
    if (!loaded) return loaded.failure();
    cpu::CpuWeights& weights = loaded.value();

    ModelQuantizerResult result;
    QuantizedCheckpointSpec spec;
    spec.method = options.method;
    spec.bits = options.bits;
    spec.groupSize = options.groupSize;
    std::vector<LayerCalibration> calibration;
    if (awq) {
        std::vector<int32_t> tokens = folder->tokenizer->encode(options.calibrationText, false);
        if (int(tokens.size()) > options.maxCalibrationTokens)
            tokens.resize(size_t(std::max(0, options.maxCalibrationTokens)));
        if (tokens.empty()) return makeError("the calibration text gives no tokens");
        if (tokens.size() < 256) spdlog::warn("only {} calibration tokens: the scales will be noisy", tokens.size());
        result.calibrationTokens = int64_t(tokens.size());
        spec.calibrationTokens = result.calibrationTokens;
        spdlog::info("calibrating on {} tokens (sequences of {})", tokens.size(), options.calibration.sequenceLength);
        const AwqCalibrator calibrator(c, weights);
        calibration = calibrator.calibrate(tokens, options.calibration,
                                           [](double f) { spdlog::info("calibration forward: {:.0f}%", f * 100.0); });
        result.notes.push_back(canFoldIntoV(c)
                                   ? "o_proj: scales folded into v_proj's output rows"
                                   : "o_proj: not scaled (GQA: v_proj's " + std::to_string(c.kvDim()) +
                                         " outputs differ from o_proj's " + std::to_string(c.qDim()) +
                                         " inputs, so 1/s cannot be folded into v_proj; AutoAWQ skips it too)");
        result.notes.push_back("no weight clipping search (AutoAWQ's auto_clip) was done");
        result.notes.push_back(
            "scale search loss: the Linears' own outputs on the calibration sample, not the whole block's");
    }
    spec.notes = result.notes;

    QuantizedCheckpointWriter writer(modelDir, spec);
    const AwqSearch search({options.bits, options.groupSize, 20});
    for (int layer = 0; layer < c.numLayers; ++layer) {
        const auto layerStart = Clock::now();
        cpu::CpuLayerWeights& w = weights.layers[size_t(layer)];
        const std::string p = "model.layers." + std::to_string(layer) + ".";
        AwqLayerScales scales;
        std::array<AwqScaleResult, kLinearInputCount> found;
        cpu::CpuLayerWeights original;
        if (awq) {
            auto searched = searchLayer(c, w, calibration[size_t(layer)], search, layer);
            if (!searched) return searched.failure();
            found = std::move(searched).value();
            scales.qkv = found[size_t(LinearInput::Qkv)].scales;
            if (canFoldIntoV(c)) scales.o = found[size_t(LinearInput::O)].scales;
            scales.gateUp = found[size_t(LinearInput::GateUp)].scales;
            scales.down = found[size_t(LinearInput::Down)].scales;
            if (scales.o.empty()) {
                // o_proj keeps s = 1: its reported AWQ error is plain RTN's.
                auto& o = found[size_t(LinearInput::O)];
                o.alpha = 0.0f;
                o.awqOutputError = o.rtnOutputError;
            }
            original = w;
            foldAwqScales(c, scales, w);
            writer.replaceTensor(p + "input_layernorm.weight", w.inputNorm);
            writer.replaceTensor(p + "post_attention_layernorm.weight", w.postNorm);
        }
        const cpu::CpuLayerWeights& source = awq ? original : w;
        const std::vector<LinearSlice> slices = layerSlices(c, scales);
        std::vector<QuantizedWeight> quantized(slices.size());
        std::vector<QuantizedLinearReport> reports(slices.size());
        std::vector<std::string> errors(slices.size());
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < int(slices.size()); ++i) {
            const LinearSlice& slice = slices[size_t(i)];
            const std::string name = p + slice.name;
            auto q = quantizeRtn(rowsOf(w.*slice.matrix, slice.firstRow, slice.rows, slice.cols), slice.rows,
                                 slice.cols, options.bits, options.groupSize);
            if (!q) {
                errors[size_t(i)] = name + ": " + q.error();
                continue;
            }
            const auto sourceRows = rowsOf(source.*slice.matrix, slice.firstRow, slice.rows, slice.cols);
            QuantizedLinearReport& report = reports[size_t(i)];
            report.weightError = weightError(sourceRows, *q, *slice.colScale, *slice.rowScale);
            if (awq) {
                auto rtn = quantizeRtn(sourceRows, slice.rows, slice.cols, options.bits, options.groupSize);
                if (!rtn) {
                    errors[size_t(i)] = name + ": " + rtn.error();
                    continue;
                }
                const AwqScaleResult& r = found[size_t(slice.input)];
                report.searched = true;
                report.rtnWeightError = weightError(sourceRows, *rtn, {}, {});
                report.alpha = r.alpha;
                report.awqOutputError = r.awqOutputError;
                report.rtnOutputError = r.rtnOutputError;
            }
            quantized[size_t(i)] = std::move(q).value();
        }
        for (const std::string& e : errors)
            if (!e.empty()) return makeError(e);
        for (size_t i = 0; i < slices.size(); ++i) writer.addLinear(p + slices[i].name, quantized[i], reports[i]);
        if (awq) calibration[size_t(layer)] = {};  // its samples are no longer needed
        spdlog::info("layer {}/{} quantized ({:.1f} s)", layer + 1, c.numLayers,
                     std::chrono::duration<double>(Clock::now() - layerStart).count());
    }
    spdlog::info("writing {}", outDir.string());
    if (auto written = writer.write(outDir); !written) return written.failure();
    result.linears = writer.reports();
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
}

}  // namespace brook
