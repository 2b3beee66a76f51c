// quantizeModel: brook-quantize's work, as a library call. Reads a dense ERNIE-4.5 model folder,
// quantizes the 7 Linears of every layer to 4 or 8 bits with asymmetric groups along K, and
// writes an AutoAWQ "gemm" folder (quantized_checkpoint_writer.h). Embedding, norms and the
// (tied) head stay float.
//   rtn: round-to-nearest per group (quantizeRtn);
//   awq: activation-aware scales first (awq_calibrator.h collects the statistics on the
//        calibration text, awq_search.h chooses and folds the scales), then the same RTN.
// Runs on the calling thread (OpenBLAS and OpenMP use the cores); logs progress via spdlog.
#pragma once

#include "quantize/awq_calibrator.h"
#include "quantize/quantized_checkpoint_writer.h"
#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace brook {

struct ModelQuantizerOptions {
    std::string method = "awq";       // "awq" | "rtn"
    int bits = 4;                     // 4 | 8
    int groupSize = 128;              // must divide every Linear's K (hidden, heads x head_dim, intermediate)
    std::string calibrationText;      // awq: tokenized with the model's tokenizer
    int maxCalibrationTokens = 2048;  // awq: the text is cut after this many tokens
    CalibrationOptions calibration;   // awq: sequence length, rows kept for the search
    bool force = false;               // write into a non-empty OUT_DIR
};

struct ModelQuantizerResult {
    std::vector<QuantizedLinearReport> linears;  // in layer order: q, k, v, o, gate, up, down
    int64_t calibrationTokens = 0;
    std::vector<std::string> notes;
    double seconds = 0.0;
};

// Checks the arguments and folders before loading anything; errors name the folder, key or
// flag at fault (a missing folder, a group size not dividing K, a non-empty OUT_DIR without
// force, an already quantized source, ...).
Result<ModelQuantizerResult> quantizeModel(const std::filesystem::path& modelDir, const std::filesystem::path& outDir,
                                           const ModelQuantizerOptions& options);

}  // namespace brook
