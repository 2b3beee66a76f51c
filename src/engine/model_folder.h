// ModelFolder: everything loaded from one Hugging Face model folder, validated together:
// config.json, generation_config.json, the safetensors checkpoint and the tokenizer.
#pragma once

#include "engine/checkpoint.h"
#include "engine/generation_config.h"
#include "engine/model_config.h"
#include "engine/result.h"
#include "engine/tokenizer.h"

#include <filesystem>
#include <memory>

namespace brook {

struct ModelFolder {
    std::filesystem::path dir;
    ModelConfig config;
    GenerationDefaults generationDefaults;
    std::unique_ptr<Checkpoint> checkpoint;
    std::shared_ptr<const Tokenizer> tokenizer;

    // Errors name what is missing or wrong ("config.json: missing key 'hidden_size'", ...).
    static Result<ModelFolder> load(const std::filesystem::path& dir);
};

}  // namespace brook
