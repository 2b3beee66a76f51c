// QuantizedCheckpointWriter: writes brook-quantize's output folder, an AutoAWQ "gemm"
// checkpoint that Brook (and AWQ-reading tools, for 4 bits) load like any model folder:
//   model.safetensors   <linear>.qweight / .qzeros / .scales (I32, I32, F16, awq_format.h) for
//                       each quantized Linear; tensors given to replaceTensor() (AWQ-folded
//                       norms) in the source's dtype; every other source tensor (embedding, final
//                       norm, a tied or untied lm_head) copied byte for byte
//   config.json         the source's, plus quantization_config {quant_method "awq", bits,
//                       group_size, zero_point true, version "gemm"}; RTN adds brook_method "rtn"
//   the other files     tokenizer, generation config, README, LICENSE, ...: copied
//   quantization_report.json  per-Linear reconstruction errors (and AWQ's search results)
// Not thread-safe; build it, then write() once.
#pragma once

#include "engine/quantized_weight.h"
#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace brook {

struct QuantizedLinearReport {
    std::string name;  // "model.layers.0.self_attn.q_proj"
    int rows = 0;      // N
    int cols = 0;      // K
    // ||W - W_eff||_F / ||W||_F, W the source weight, W_eff the one the quantized model
    // multiplies by (AWQ's scales undone).
    double weightError = 0.0;
    // AWQ only (searched == true); the output errors are those of the Linear's whole input
    // group (q|k|v, gate|up), relative, on the calibration sample.
    bool searched = false;
    double rtnWeightError = 0.0;  // plain RTN's weight error, for comparison
    float alpha = 0.0f;
    double awqOutputError = 0.0;
    double rtnOutputError = 0.0;
};

struct QuantizedCheckpointSpec {
    std::string method = "awq";  // "awq" | "rtn"
    int bits = 4;
    int groupSize = 128;
    int64_t calibrationTokens = 0;
    std::vector<std::string> notes;  // written to the report (what was skipped and why)
};

class QuantizedCheckpointWriter {
public:
    QuantizedCheckpointWriter(std::filesystem::path sourceDir, QuantizedCheckpointSpec spec);

    // Adds <prefix>.qweight/.qzeros/.scales; the source's <prefix>.weight is not copied.
    void addLinear(const std::string& prefix, const QuantizedWeight& weight, QuantizedLinearReport report);
    // A source float tensor whose values changed; written in the source's dtype and shape.
    void replaceTensor(const std::string& name, std::vector<float> values);

    // Writes everything into outDir (created if missing). Errors name the file at fault.
    Result<void> write(const std::filesystem::path& outDir) const;

    const std::vector<QuantizedLinearReport>& reports() const { return m_reports; }

private:
    Result<void> writeTensors(const std::filesystem::path& outDir) const;
    Result<void> writeConfig(const std::filesystem::path& outDir) const;
    Result<void> copyOtherFiles(const std::filesystem::path& outDir) const;
    Result<void> writeReport(const std::filesystem::path& outDir) const;

    struct PackedLinear {
        std::vector<int64_t> qweightShape, qzerosShape, scalesShape;
        std::vector<std::byte> qweight, qzeros, scales;
    };

    std::filesystem::path m_sourceDir;
    QuantizedCheckpointSpec m_spec;
    std::map<std::string, PackedLinear> m_linears;  // by prefix
    std::map<std::string, std::vector<float>> m_replaced;
    std::vector<QuantizedLinearReport> m_reports;
};

}  // namespace brook
