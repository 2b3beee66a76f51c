// Checkpoint: all tensors of a model folder, from model.safetensors or from the shards named
// in model.safetensors.index.json, memory-mapped. Also checks the tensors against the
// ERNIE-4.5 layout of a ModelConfig (names, shapes, float dtypes, the tied lm_head rule).
#pragma once

#include "engine/model_config.h"
#include "engine/result.h"
#include "engine/safetensors_file.h"
#include "engine/tensor_view.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace brook {

// Immutable after open(): all const methods are thread-safe.
class Checkpoint {
public:
    // model.safetensors if present, else the shards of model.safetensors.index.json.
    static Result<std::unique_ptr<Checkpoint>> open(const std::filesystem::path& modelDir);

    const TensorView* find(const std::string& name) const;
    // The tensor, or an error naming the tensor and the folder.
    Result<const TensorView*> require(const std::string& name) const;

    // Checks every tensor the config's model family needs: present, float dtype, expected shape.
    // With config.quantization set, the 7 Linears of each layer are AWQ gemm tensors instead
    // (.qweight I32, .qzeros I32, .scales F16); embeddings, norms and lm_head stay float.
    Result<void> validate(const ModelConfig& config) const;
    // lm_head.weight if present, else model.embed_tokens.weight (tied head rule).
    const TensorView* lmHead() const;

    size_t totalBytes() const;

private:
    std::filesystem::path m_dir;
    std::vector<std::unique_ptr<SafetensorsFile>> m_files;
    std::map<std::string, const TensorView*> m_byName;  // into m_files' tensors
};

}  // namespace brook
