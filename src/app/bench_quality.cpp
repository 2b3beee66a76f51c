// brook-bench quality: see bench_quality.h. The two engines never run at the same time (the
// reference is shut down before the model loads), so a GPU only has to hold one of them; their
// KV caches are sized for the text alone.
#include "app/bench_quality.h"

#include "platform/resource_path.h"
#include "launch/engine_launcher.h"
#include "engine/quality_metrics.h"
#include "engine/tokenizer.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

namespace brook {

namespace {

struct ModelLogits {
    std::vector<int32_t> tokens;
    std::vector<float> logits;  // [n, V]
    int vocabSize = 0;
    std::string backend;
    std::string quantization;
    double seconds = 0.0;
};

std::string describeQuantization(const ModelConfig& config, const std::string& flag)
{
    if (config.quantization)
        return "awq " + std::to_string(config.quantization->bits) + "-bit, group " +
               std::to_string(config.quantization->groupSize) + " (checkpoint)";
    if (!flag.empty()) return flag + " (at load)";
    return "dense";
}

Result<ModelLogits> runModel(const std::filesystem::path& dir, const std::string& quantization, const std::string& text,
                             const QualityBenchOptions& o)
{
    LaunchOptions launch;
    launch.modelDir = dir;
    launch.device = o.device;
    launch.dtype = o.dtype;
    launch.quantization = quantization;
    launch.maxModelLen = o.maxTokens;
    launch.maxNumSeqs = 1;
    launch.maxNumBatchedTokens = std::max(o.maxTokens, 256);
    launch.numKvBlocks = (o.maxTokens + launch.blockSize - 1) / launch.blockSize + 1;
    const auto start = std::chrono::steady_clock::now();
    auto launched = launchEngine(launch);
    if (!launched) return launched.failure();
    Engine& engine = *launched->engine;
    ModelLogits out;
    out.tokens = engine.tokenizer().encode(text, false);
    if (int(out.tokens.size()) > o.maxTokens) out.tokens.resize(size_t(o.maxTokens));
    if (out.tokens.size() < 2) return makeError("the text gives fewer than 2 tokens");
    auto logits = engine.promptLogits(out.tokens);
    if (!logits) return makeError(dir.string() + ": " + logits.error());
    out.logits = std::move(logits).value();
    out.vocabSize = launched->modelConfig.vocabSize;
    out.backend = engine.backendName();
    out.quantization = describeQuantization(launched->modelConfig, quantization);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace

void addQualityFlags(CLI::App& app, QualityBenchOptions& o)
{
    app.add_option("--model,-m", o.model, "quantized model folder (or the dense one with --quantization)")->required();
    app.add_option("--reference", o.reference, "dense reference model folder")->required();
    app.add_option("--text", o.textFile, "text to compare on (default: Brook's evaluation text)");
    app.add_option("--device", o.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--dtype", o.dtype, "auto, bfloat16, float16 or float32")
        ->check(CLI::IsMember({"auto", "bfloat16", "float16", "float32"}));
    app.add_option("--quantization", o.quantization, "for --model: int4, int8 (RTN at load) or awq")
        ->check(CLI::IsMember({"int4", "int8", "awq"}));
    app.add_option("--max-tokens", o.maxTokens, "tokens of the text compared at most")
        ->check(CLI::Range(2, 1 << 20))
        ->capture_default_str();
}

int runQualityBench(const QualityBenchOptions& o)
{
    std::filesystem::path textFile = o.textFile;
    if (textFile.empty()) textFile = findResource("calibration/evaluation.txt");
    if (textFile.empty()) {
        std::cerr << "brook-bench: cannot find Brook's evaluation text; give one with --text FILE\n";
        return 1;
    }
    std::ifstream in(textFile, std::ios::binary);
    if (!in) {
        std::cerr << "brook-bench: " << textFile.string() << ": cannot open\n";
        return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();

    auto reference = runModel(o.reference, "", text.str(), o);
    if (!reference) {
        std::cerr << "brook-bench: reference: " << reference.error() << "\n";
        return 1;
    }
    auto model = runModel(o.model, o.quantization, text.str(), o);
    if (!model) {
        std::cerr << "brook-bench: model: " << model.error() << "\n";
        return 1;
    }
    if (model->tokens != reference->tokens || model->vocabSize != reference->vocabSize) {
        std::cerr << "brook-bench: the two models tokenize the text differently (or differ in vocabulary size); "
                     "they are not the same model\n";
        return 1;
    }
    QualityMetrics metrics;
    metrics.addSequence(reference->logits, model->logits, reference->tokens, reference->vocabSize);
    const QualitySummary s = metrics.summary();
    std::cout << "text: " << textFile.string() << " (" << reference->tokens.size() << " tokens, " << s.positions
              << " next-token positions)\n"
              << "reference: " << o.reference.string() << " [" << reference->backend << ", " << reference->quantization
              << "] " << reference->seconds << " s\n"
              << "model: " << o.model.string() << " [" << model->backend << ", " << model->quantization << "] "
              << model->seconds << " s\n"
              << "top-1 agreement: " << s.top1Agreement * 100.0 << " %\n"
              << "mean KL(reference || model): " << s.meanKl << " nats (max " << s.maxKl << ")\n"
              << "perplexity: reference " << s.referencePerplexity << ", model " << s.candidatePerplexity << ", ratio "
              << s.perplexityRatio() << "\n";
    return 0;
}

}  // namespace brook
