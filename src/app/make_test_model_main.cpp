// brook-make-test-model: writes an ERNIE-4.5-shaped model folder with random weights and a
// small trained tokenizer, for tests, benchmarks and trying Brook without the real checkpoint.
//   brook-make-test-model OUT_DIR [--shape tiny|ernie-0.3b] [--dtype bf16|fp16|fp32] [--seed N]
//                         [--shards] [--vocab N] [--layers N] ...
// Dimension flags override the chosen shape; a flag left out keeps the shape's value.
#include "engine/utf8_path.h"
#include "platform/console_utf8.h"
#include "platform/executable_path.h"
#include "testing/test_model_writer.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <optional>

int main(int argc, char** argv)
{
    brook::rememberArgv0(argc > 0 ? argv[0] : nullptr);
    brook::useUtf8Console();
    CLI::App app{"Write an ERNIE-4.5 model folder with random weights (for tests and benchmarks)"};
    std::string outDir;
    std::string shapeName = "tiny";
    std::string dtypeName = "bf16";
    brook::testing::TestModelOptions options;
    std::optional<int> vocab, hidden, intermediate, layers, heads, kvHeads, headDim, maxPositions;
    std::optional<double> ropeTheta;
    bool untied = false;
    bool verbose = false;

    app.add_option("OUT_DIR", outDir, "Folder to write (created if missing)")->required();
    app.add_option("--shape", shapeName, "Base shape: tiny or ernie-0.3b")
        ->check(CLI::IsMember({"tiny", "ernie-0.3b"}))
        ->capture_default_str();
    app.add_option("--dtype", dtypeName, "Weight dtype: bf16, fp16 or fp32")
        ->check(CLI::IsMember({"bf16", "fp16", "fp32"}))
        ->capture_default_str();
    app.add_option("--seed", options.seed, "Random seed")->capture_default_str();
    app.add_flag("--shards", options.shardWeights, "Write two shards and model.safetensors.index.json");
    app.add_flag("--lm-head", options.writeLmHead, "Also write lm_head.weight (a copy of the embedding when tied)");
    app.add_flag("--untied", untied, "tie_word_embeddings false, with its own lm_head.weight");
    app.add_option("--vocab", vocab,
                   "Model vocab_size (default: the shape's; tiny: the tokenizer's size rounded up to 64)");
    app.add_option("--tokenizer-vocab", options.tokenizerVocabSize, "Sentencepiece pieces to train")
        ->capture_default_str();
    app.add_option("--hidden", hidden, "hidden_size");
    app.add_option("--intermediate", intermediate, "intermediate_size");
    app.add_option("--layers", layers, "num_hidden_layers");
    app.add_option("--heads", heads, "num_attention_heads");
    app.add_option("--kv-heads", kvHeads, "num_key_value_heads");
    app.add_option("--head-dim", headDim, "head_dim");
    app.add_option("--max-positions", maxPositions, "max_position_embeddings");
    app.add_option("--rope-theta", ropeTheta, "rope_theta");
    app.add_flag("-v,--verbose", verbose, "Debug logging");
    CLI11_PARSE(app, argc, argv);
    if (verbose) spdlog::set_level(spdlog::level::debug);

    using brook::testing::TestModelShape;
    options.shape = shapeName == "ernie-0.3b" ? TestModelShape::ernie03b() : TestModelShape::tiny();
    auto apply = [](int& field, const std::optional<int>& value) {
        if (value) field = *value;
    };
    apply(options.shape.vocabSize, vocab);
    apply(options.shape.hiddenSize, hidden);
    apply(options.shape.intermediateSize, intermediate);
    apply(options.shape.numLayers, layers);
    apply(options.shape.numHeads, heads);
    apply(options.shape.numKvHeads, kvHeads);
    apply(options.shape.headDim, headDim);
    apply(options.shape.maxPositionEmbeddings, maxPositions);
    if (ropeTheta) options.shape.ropeTheta = *ropeTheta;
    const std::map<std::string, brook::DType> dtypes = {
        {"bf16", brook::DType::BF16}, {"fp16", brook::DType::F16}, {"fp32", brook::DType::F32}};
    options.dtype = dtypes.at(dtypeName);
    options.tieWordEmbeddings = !untied;

    const auto start = std::chrono::steady_clock::now();
    if (auto ok = brook::testing::writeTestModel(brook::pathFromUtf8(outDir), options); !ok) {
        spdlog::error("{}", ok.error());
        return 1;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& s = options.shape;
    spdlog::info("wrote {} ({}: hidden {}, ffn {}, {} layers, heads {}/{}, head_dim {}, {}, seed {}) in {:.1f} s",
                 outDir, shapeName, s.hiddenSize, s.intermediateSize, s.numLayers, s.numHeads, s.numKvHeads, s.headDim,
                 dtypeName, options.seed, seconds);
    return 0;
}
