// brook-bench quality: how close a quantized model stays to its dense reference on a fixed
// text. Both models run through the engine (Engine::promptLogits: teacher-forced logits at every
// position, the backend's real forward), one after the other, and QualityMetrics compares them:
// top-1 agreement, mean KL(P_ref || P_model) in nats, each model's perplexity and their ratio.
//   brook-bench quality --model QDIR --reference DIR [--text FILE] [--device cpu|cuda]
//                       [--quantization int4|int8] [--max-tokens 512]
// --quantization applies to --model only, so --model DIR --reference DIR --quantization int4
// measures on-the-fly quantization against the same dense folder.
#pragma once

#include <filesystem>
#include <string>

namespace CLI {
class App;
}

namespace brook {

struct QualityBenchOptions {
    std::filesystem::path model;      // quantized folder, or the dense one with --quantization
    std::filesystem::path reference;  // dense folder
    std::filesystem::path textFile;   // empty: Brook's evaluation text (resources/calibration/evaluation.txt)
    std::string device = "auto";
    std::string dtype = "auto";
    std::string quantization;  // for --model: "", int4, int8, awq
    int maxTokens = 512;
};

void addQualityFlags(CLI::App& app, QualityBenchOptions& options);
int runQualityBench(const QualityBenchOptions& options);

}  // namespace brook
