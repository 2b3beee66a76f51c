// Checkpoint: opens the safetensors file(s) of a model folder and checks them against the
// layout of its model family (docs/model-ernie-4.5.md section 2; AWQ Linears: section 5). Weights are
// [out, in] as torch stores them. Tensors the model does not use (e.g. rotary inv_freq buffers) are accepted and ignored.
#include "engine/checkpoint.h"

#include "engine/bounded_json.h"
#include "engine/models/model_family.h"
#include "engine/regular_file.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

namespace brook {

namespace {

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

struct ExpectedTensor {
    std::string name;
    std::vector<int64_t> shape;
    DType dtype = DType::Unknown;  // Unknown: any float dtype (dense weights, norms, embeddings)
};

// Adds one Linear [N out, K in]: dense `.weight`, or AutoAWQ gemm tensors (docs/model-ernie-4.5.md section 5).
void addLinear(std::vector<ExpectedTensor>& layout, const std::string& prefix, int64_t N, int64_t K,
               const std::optional<QuantizationConfig>& q)
{
    if (!q) {
        layout.push_back({prefix + ".weight", {N, K}});
        return;
    }
    const int64_t words = N * q->bits / 32, groups = K / q->groupSize;
    layout.push_back({prefix + ".qweight", {K, words}, DType::I32});
    layout.push_back({prefix + ".qzeros", {groups, words}, DType::I32});
    layout.push_back({prefix + ".scales", {groups, N}, DType::F16});
}

// The tensors of the config's family, in transformers' names.
std::vector<ExpectedTensor> modelLayout(const ModelConfig& c)
{
    const int64_t V = c.vocabSize, H = c.hiddenSize, I = c.intermediateSize;
    const int64_t Q = c.qDim(), KV = c.kvDim();
    const auto& quant = c.quantization;
    std::vector<ExpectedTensor> layout;
    layout.push_back({"model.embed_tokens.weight", {V, H}});
    for (int i = 0; i < c.numLayers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        layout.push_back({p + "input_layernorm.weight", {H}});
        addLinear(layout, p + "self_attn.q_proj", Q, H, quant);
        addLinear(layout, p + "self_attn.k_proj", KV, H, quant);
        addLinear(layout, p + "self_attn.v_proj", KV, H, quant);
        addLinear(layout, p + "self_attn.o_proj", H, Q, quant);
        if (familyOf(c).qkNorm) {
            layout.push_back({p + "self_attn.q_norm.weight", {c.headDim}});
            layout.push_back({p + "self_attn.k_norm.weight", {c.headDim}});
        }
        layout.push_back({p + "post_attention_layernorm.weight", {H}});
        addLinear(layout, p + "mlp.gate_proj", I, H, quant);
        addLinear(layout, p + "mlp.up_proj", I, H, quant);
        addLinear(layout, p + "mlp.down_proj", H, I, quant);
    }
    layout.push_back({"model.norm.weight", {H}});
    return layout;
}

Result<void> checkTensor(const TensorView& t, const std::vector<int64_t>& shape, DType dtype = DType::Unknown)
{
    if (dtype == DType::Unknown && !isFloatDType(t.dtype))
        return makeError(t.file + ": tensor '" + t.name + "' has dtype " + dtypeName(t.dtype) +
                         ", expected F32, F16 or BF16");
    if (dtype != DType::Unknown && t.dtype != dtype)
        return makeError(t.file + ": tensor '" + t.name + "' has dtype " + dtypeName(t.dtype) + ", expected " +
                         dtypeName(dtype) + " (AutoAWQ gemm layout)");
    if (t.shape != shape)
        return makeError(t.file + ": tensor '" + t.name + "' has shape " + shapeToString(t.shape) + ", expected " +
                         shapeToString(shape));
    return {};
}

// Reads model.safetensors.index.json's weight_map: tensor name -> shard file name.
Result<std::map<std::string, std::string>> readWeightMap(const std::filesystem::path& indexPath)
{
    auto text = readRegularFile(indexPath);
    if (!text) return text.failure();
    auto parsed = parseBoundedJson(*text, indexPath.string());
    if (!parsed) return parsed.failure();
    const nlohmann::json& root = parsed.value();
    if (!root.is_object()) return makeError(indexPath.string() + ": not valid JSON (expected an object)");
    auto it = root.find("weight_map");
    if (it == root.end() || !it->is_object())
        return makeError(indexPath.string() + ": missing key 'weight_map' (an object of tensor -> shard file)");
    std::map<std::string, std::string> weightMap;
    for (const auto& [tensor, shard] : it->items()) {
        if (!shard.is_string())
            return makeError(indexPath.string() + ": weight_map entry '" + tensor + "' is not a file name");
        const std::filesystem::path shardPath(shard.get<std::string>());
        bool escapes = shardPath.is_absolute();
        for (const auto& part : shardPath) escapes = escapes || part == "..";
        if (escapes || shardPath.empty())
            return makeError(indexPath.string() + ": weight_map names shard '" + shard.get<std::string>() +
                             "', which is not a file inside the model folder");
        weightMap[tensor] = shard.get<std::string>();
    }
    if (weightMap.empty()) return makeError(indexPath.string() + ": weight_map is empty");
    return weightMap;
}

}  // namespace

Result<std::unique_ptr<Checkpoint>> Checkpoint::open(const std::filesystem::path& modelDir)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(modelDir, ec))
        return makeError(modelDir.string() + ": model folder does not exist");
    auto checkpoint = std::make_unique<Checkpoint>();
    checkpoint->m_dir = modelDir;

    const auto singlePath = modelDir / kSingleFile;
    const auto indexPath = modelDir / kIndexFile;
    std::map<std::string, std::string> weightMap;  // empty for a single file
    if (std::filesystem::exists(singlePath, ec)) {
        auto file = SafetensorsFile::open(singlePath);
        if (!file) return file.failure();
        checkpoint->m_files.push_back(std::move(file.value()));
    } else if (std::filesystem::exists(indexPath, ec)) {
        auto map = readWeightMap(indexPath);
        if (!map) return map.failure();
        weightMap = std::move(map.value());
        std::set<std::string> shards;
        for (const auto& [tensor, shard] : weightMap) shards.insert(shard);
        for (const std::string& shard : shards) {
            const auto shardPath = modelDir / shard;
            if (!std::filesystem::exists(shardPath, ec))
                return makeError(indexPath.string() + ": shard '" + shard + "' is missing from " + modelDir.string());
            auto file = SafetensorsFile::open(shardPath);
            if (!file) return file.failure();
            checkpoint->m_files.push_back(std::move(file.value()));
        }
    } else {
        return makeError(modelDir.string() + ": no weights found (looked for " + kSingleFile + " and " + kIndexFile +
                         ")");
    }

    for (const auto& file : checkpoint->m_files) {
        for (const auto& [name, view] : file->tensors()) {
            auto [it, inserted] = checkpoint->m_byName.emplace(name, &view);
            if (!inserted)
                return makeError(modelDir.string() + ": tensor '" + name + "' appears in both " + it->second->file +
                                 " and " + view.file);
        }
    }
    for (const auto& [tensor, shard] : weightMap) {
        const TensorView* view = checkpoint->find(tensor);
        if (!view || view->file != std::filesystem::path(shard).filename().string())
            return makeError(indexPath.string() + ": lists tensor '" + tensor + "' in shard '" + shard +
                             "', but that file does not contain it");
    }
    spdlog::debug("checkpoint {}: {} file(s), {} tensors, {} bytes", modelDir.string(), checkpoint->m_files.size(),
                  checkpoint->m_byName.size(), checkpoint->totalBytes());
    return checkpoint;
}

const TensorView* Checkpoint::find(const std::string& name) const
{
    auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : it->second;
}

Result<const TensorView*> Checkpoint::require(const std::string& name) const
{
    if (const TensorView* view = find(name)) return view;
    std::string files;
    for (const auto& file : m_files) files += (files.empty() ? "" : ", ") + file->path().filename().string();
    return makeError(m_dir.string() + ": tensor '" + name + "' is missing from the checkpoint (" + files + ")");
}

namespace {

// One more than the highest N of the "model.layers.N." tensors (0 without any).
int64_t layerCount(const std::map<std::string, const TensorView*>& tensors)
{
    constexpr std::string_view prefix = "model.layers.";
    int64_t count = 0;
    for (auto it = tensors.lower_bound(std::string(prefix)); it != tensors.end(); ++it) {
        const std::string& name = it->first;
        if (name.compare(0, prefix.size(), prefix) != 0) break;  // sorted: past the layers
        int64_t index = -1;
        const char* begin = name.data() + prefix.size();
        auto [end, ec] = std::from_chars(begin, name.data() + name.size(), index);
        if (ec == std::errc() && end != begin && *end == '.' && index >= 0) count = std::max(count, index + 1);
    }
    return count;
}

}  // namespace

Result<void> Checkpoint::validate(const ModelConfig& config) const
{
    // Counted before the expected layout is built from config.json, so a config claiming more
    // layers than the weights hold is one error naming the field, not a tensor missing deep in.
    if (const int64_t layers = layerCount(m_byName); config.numLayers > layers)
        return makeError((m_dir / "config.json").string() + ": num_hidden_layers " + std::to_string(config.numLayers) +
                         ", but the checkpoint holds " + std::to_string(layers) + " layer(s) (model.layers.N tensors)");
    std::set<std::string> used;
    for (const ExpectedTensor& expected : modelLayout(config)) {
        auto view = require(expected.name);
        if (!view) {
            if (config.quantization && !find(expected.name) && expected.dtype != DType::Unknown) {
                const std::string dense = expected.name.substr(0, expected.name.rfind('.')) + ".weight";
                if (find(dense))
                    return makeError(view.error() +
                                     "; config.json's quantization_config says AWQ, but the "
                                     "checkpoint holds the dense '" +
                                     dense + "'");
            }
            return view.failure();
        }
        if (auto ok = checkTensor(**view, expected.shape, expected.dtype); !ok) return ok;
        used.insert(expected.name);
    }
    const std::vector<int64_t> headShape = {config.vocabSize, config.hiddenSize};
    if (const TensorView* head = find("lm_head.weight")) {
        if (auto ok = checkTensor(*head, headShape); !ok) return ok;
        used.insert(head->name);
    } else if (!config.tieWordEmbeddings) {
        return makeError(m_dir.string() +
                         ": tensor 'lm_head.weight' is missing, and config.json sets tie_word_embeddings false");
    }
    for (const auto& [name, view] : m_byName) {
        if (!used.count(name))
            spdlog::debug("{}: ignoring tensor '{}' (not part of {})", view->file, name, familyOf(config).name);
    }
    return {};
}

const TensorView* Checkpoint::lmHead() const
{
    if (const TensorView* head = find("lm_head.weight")) return head;
    return find("model.embed_tokens.weight");
}

size_t Checkpoint::totalBytes() const
{
    size_t total = 0;
    for (const auto& [name, view] : m_byName) total += view->numBytes;
    return total;
}

}  // namespace brook
