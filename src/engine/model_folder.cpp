// ModelFolder::load: reads and cross-checks every file of a Hugging Face model folder, in the
// order a user would fix them (folder, config, tokenizer, weights), stopping at the first problem.
#include "engine/model_folder.h"

#include <spdlog/spdlog.h>

namespace brook {

Result<ModelFolder> ModelFolder::load(const std::filesystem::path& dir)
{
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) return makeError(dir.string() + ": model folder does not exist");
    if (!std::filesystem::is_directory(dir, ec)) return makeError(dir.string() + ": is not a folder");

    ModelFolder folder;
    folder.dir = dir;
    if (!std::filesystem::exists(dir / "config.json", ec))
        return makeError(dir.string() + ": config.json is missing (not a Hugging Face model folder?)");
    auto config = loadModelConfig(dir / "config.json");
    if (!config) return config.failure();
    folder.config = std::move(config.value());

    auto defaults = loadGenerationDefaults(dir / "generation_config.json");
    if (!defaults) return defaults.failure();
    folder.generationDefaults = std::move(defaults.value());
    // As transformers' GenerationConfig.from_model_config: without a list, config.json's eos stops.
    if (folder.generationDefaults.eosTokenIds.empty() && folder.config.eosTokenId >= 0)
        folder.generationDefaults.eosTokenIds.push_back(folder.config.eosTokenId);

    if (!std::filesystem::exists(dir / "tokenizer.model", ec))
        return makeError(dir.string() + ": tokenizer.model is missing");
    // sentencepiece would block forever reading a FIFO; every other file is checked where it is read.
    if (!std::filesystem::is_regular_file(dir / "tokenizer.model", ec))
        return makeError((dir / "tokenizer.model").string() + ": not a regular file");
    auto tokenizer = Tokenizer::load(dir);
    if (!tokenizer) return tokenizer.failure();
    folder.tokenizer = std::shared_ptr<const Tokenizer>(std::move(tokenizer.value()));
    if (folder.tokenizer->vocabSize() > folder.config.vocabSize)
        return makeError(dir.string() + ": the tokenizer has " + std::to_string(folder.tokenizer->vocabSize()) +
                         " tokens, more than config.json's vocab_size " + std::to_string(folder.config.vocabSize));

    auto checkpoint = Checkpoint::open(dir);
    if (!checkpoint) return checkpoint.failure();
    folder.checkpoint = std::move(checkpoint.value());
    if (auto ok = folder.checkpoint->validate(folder.config); !ok) return ok.failure();

    const ModelConfig& c = folder.config;
    spdlog::info(
        "model {}: {} ({} layers, hidden {}, heads {}/{}, vocab {}), {:.1f} MiB of weights, tokenizer {} tokens",
        dir.string(), c.architecture, c.numLayers, c.hiddenSize, c.numHeads, c.numKvHeads, c.vocabSize,
        double(folder.checkpoint->totalBytes()) / (1024.0 * 1024.0), folder.tokenizer->vocabSize());
    return folder;
}

}  // namespace brook
