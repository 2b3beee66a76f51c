// brook-quantize MODEL_DIR OUT_DIR --method awq|rtn --bits 4|8 --group-size 128
// Writes a 4-bit or 8-bit AutoAWQ "gemm" copy of a dense ERNIE-4.5 model folder (the work is
// quantizeModel, engine/model_quantizer.h), then logs a per-Linear table of errors.
// AWQ calibrates on text: --calibration FILE, else the calibration text Brook ships
// (share/brook/calibration/calibration.txt, or resources/ in the source tree).
#include "platform/console_utf8.h"
#include "platform/executable_path.h"
#include "app/cli_logging.h"
#include "platform/resource_path.h"
#include "quantize/model_quantizer.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>
#include <sstream>

using namespace brook;

namespace {

std::string shortName(const std::string& name)
{
    // "model.layers.3.self_attn.q_proj" -> "q_proj"
    const size_t dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
}

std::string layerOf(const std::string& name)
{
    const std::string prefix = "model.layers.";
    if (name.rfind(prefix, 0) != 0) return "-";
    return name.substr(prefix.size(), name.find('.', prefix.size()) - prefix.size());
}

void logTable(const ModelQuantizerResult& result, bool awq)
{
    if (awq)
        spdlog::info("{:>5} {:<10} {:>13} {:>10} {:>10} {:>6} {:>10} {:>10}", "layer", "linear", "shape", "w err",
                     "rtn w err", "alpha", "out err", "rtn out");
    else spdlog::info("{:>5} {:<10} {:>13} {:>10}", "layer", "linear", "shape", "w err");
    double weightSum = 0.0, awqSum = 0.0, rtnSum = 0.0;
    for (const QuantizedLinearReport& r : result.linears) {
        const std::string shape = std::to_string(r.rows) + "x" + std::to_string(r.cols);
        if (awq)
            spdlog::info("{:>5} {:<10} {:>13} {:>10.3e} {:>10.3e} {:>6.2f} {:>10.3e} {:>10.3e}", layerOf(r.name),
                         shortName(r.name), shape, r.weightError, r.rtnWeightError, r.alpha, r.awqOutputError,
                         r.rtnOutputError);
        else spdlog::info("{:>5} {:<10} {:>13} {:>10.3e}", layerOf(r.name), shortName(r.name), shape, r.weightError);
        weightSum += r.weightError;
        awqSum += r.awqOutputError;
        rtnSum += r.rtnOutputError;
    }
    const double n = double(std::max<size_t>(result.linears.size(), 1));
    spdlog::info("mean relative weight error: {:.4e}", weightSum / n);
    if (awq)
        spdlog::info("mean relative output error on the calibration sample: AWQ {:.4e}, RTN {:.4e}", awqSum / n,
                     rtnSum / n);
    for (const std::string& note : result.notes) spdlog::info("note: {}", note);
}

}  // namespace

int main(int argc, char** argv)
{
    brook::rememberArgv0(argc > 0 ? argv[0] : nullptr);
    brook::useUtf8Console();
    CLI::App app{"brook-quantize: write a 4-bit or 8-bit AWQ-format copy of a dense ERNIE-4.5 model folder"};
    std::filesystem::path modelDir, outDir, calibrationFile;
    ModelQuantizerOptions options;
    std::string logLevel = "info";
    app.add_option("MODEL_DIR", modelDir, "dense model folder (config.json, model.safetensors, tokenizer.model)")
        ->required();
    app.add_option("OUT_DIR", outDir, "output folder (created; must be empty unless --force)")->required();
    app.add_option("--method", options.method, "awq (activation-aware scales, then RTN) or rtn (round-to-nearest)")
        ->check(CLI::IsMember({"awq", "rtn"}))
        ->capture_default_str();
    app.add_option("--bits", options.bits, "4 or 8")->check(CLI::IsMember({4, 8}))->capture_default_str();
    app.add_option("--group-size", options.groupSize, "weights per scale along the input dimension")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--calibration", calibrationFile, "awq: calibration text (default: the one Brook ships)");
    app.add_option("--calibration-tokens", options.maxCalibrationTokens, "awq: calibration tokens used at most")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--calibration-seq-len", options.calibration.sequenceLength,
                   "awq: the text is cut into sequences this long")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--search-rows", options.calibration.sampleRows,
                   "awq: input rows per Linear on which the scales are searched")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_flag("--force", options.force, "write into OUT_DIR even if it is not empty");
    app.add_option("--log-level", logLevel, "trace, debug, info, warn, error")->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    setUpCliLogging(logLevel);

    const bool awq = options.method == "awq";
    if (awq) {
        if (calibrationFile.empty()) {
            calibrationFile = findResource("calibration/calibration.txt");
            if (calibrationFile.empty()) {
                std::cerr << "brook-quantize: cannot find Brook's calibration text (share/brook/calibration/"
                             "calibration.txt); give one with --calibration FILE\n";
                return 1;
            }
        }
        std::ifstream in(calibrationFile, std::ios::binary);
        if (!in) {
            std::cerr << "brook-quantize: " << calibrationFile.string() << ": cannot open the calibration text\n";
            return 1;
        }
        std::ostringstream text;
        text << in.rdbuf();
        options.calibrationText = text.str();
        spdlog::info("calibration text: {} ({} bytes)", calibrationFile.string(), options.calibrationText.size());
    }

    auto result = quantizeModel(modelDir, outDir, options);
    if (!result) {
        std::cerr << "brook-quantize: " << result.error() << "\n";
        return 1;
    }
    logTable(*result, awq);
    spdlog::info("wrote {} ({} {}-bit, group {}) in {:.1f} s", outDir.string(), options.method, options.bits,
                 options.groupSize, result->seconds);
    return 0;
}
