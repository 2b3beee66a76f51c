// QuantizedCheckpointWriter: see quantized_checkpoint_writer.h. Source tensors are read from the
// source folder's safetensors files themselves (model.safetensors or the shards named by
// model.safetensors.index.json), so tensors the engine does not know are carried over too.
#include "quantize/quantized_checkpoint_writer.h"

#include "engine/awq_format.h"
#include "engine/bounded_json.h"
#include "engine/regular_file.h"
#include "engine/safetensors_file.h"
#include "engine/safetensors_writer.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <sstream>

namespace brook {

namespace {

using OrderedJson = nlohmann::ordered_json;

template <typename T>
std::vector<std::byte> toBytes(const std::vector<T>& values)
{
    std::vector<std::byte> bytes(values.size() * sizeof(T));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

Result<void> writeText(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return makeError(path.string() + ": cannot create file: " + std::strerror(errno));
    out << text;
    out.close();
    if (!out) return makeError(path.string() + ": write failed");
    return {};
}

// The safetensors files holding the source checkpoint.
Result<std::vector<std::filesystem::path>> sourceTensorFiles(const std::filesystem::path& dir)
{
    std::error_code ec;
    if (std::filesystem::exists(dir / "model.safetensors", ec)) return std::vector{dir / "model.safetensors"};
    const std::filesystem::path index = dir / "model.safetensors.index.json";
    auto text = readRegularFile(index);
    if (!text) return makeError(dir.string() + ": neither model.safetensors nor model.safetensors.index.json");
    auto parsed = parseBoundedJson(*text, index.string());
    if (!parsed) return parsed.failure();
    try {
        const auto& json = *parsed;
        std::set<std::string> shards;
        for (const auto& [name, file] : json.at("weight_map").items()) shards.insert(file.get<std::string>());
        std::vector<std::filesystem::path> files;
        for (const std::string& shard : shards) files.push_back(dir / shard);
        return files;
    } catch (const nlohmann::json::exception& e) {
        return makeError(index.string() + ": " + e.what());
    }
}

// Files of a model folder that are weights in some format (not copied).
bool isWeightFile(const std::filesystem::path& path)
{
    const std::string name = path.filename().string();
    for (const char* ext : {".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack", ".ckpt", ".pdparams"})
        if (name.size() >= std::strlen(ext) &&
            name.compare(name.size() - std::strlen(ext), std::string::npos, ext) == 0)
            return true;
    return name == "model.safetensors.index.json" || name == "pytorch_model.bin.index.json";
}

}  // namespace

QuantizedCheckpointWriter::QuantizedCheckpointWriter(std::filesystem::path sourceDir, QuantizedCheckpointSpec spec)
    : m_sourceDir(std::move(sourceDir)), m_spec(std::move(spec))
{}

void QuantizedCheckpointWriter::addLinear(const std::string& prefix, const QuantizedWeight& weight,
                                          QuantizedLinearReport report)
{
    const AwqTensors awq = toAwqGemm(weight);
    const int64_t K = weight.cols, N = weight.rows, G = weight.groupsPerRow();
    const int64_t words = N * weight.bits / 32;
    PackedLinear packed;
    packed.qweightShape = {K, words};
    packed.qzerosShape = {G, words};
    packed.scalesShape = {G, N};
    packed.qweight = toBytes(awq.qweight);
    packed.qzeros = toBytes(awq.qzeros);
    packed.scales = toBytes(awq.scales);
    m_linears[prefix] = std::move(packed);
    report.name = prefix;
    report.rows = weight.rows;
    report.cols = weight.cols;
    m_reports.push_back(std::move(report));
}

void QuantizedCheckpointWriter::replaceTensor(const std::string& name, std::vector<float> values)
{
    m_replaced[name] = std::move(values);
}

Result<void> QuantizedCheckpointWriter::write(const std::filesystem::path& outDir) const
{
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    if (ec) return makeError(outDir.string() + ": cannot create the folder: " + ec.message());
    if (auto r = writeTensors(outDir); !r) return r;
    if (auto r = writeConfig(outDir); !r) return r;
    if (auto r = copyOtherFiles(outDir); !r) return r;
    return writeReport(outDir);
}

Result<void> QuantizedCheckpointWriter::writeTensors(const std::filesystem::path& outDir) const
{
    auto files = sourceTensorFiles(m_sourceDir);
    if (!files) return files.failure();
    SafetensorsWriter out;
    std::set<std::string> replacedSeen;
    for (const auto& path : *files) {
        auto file = SafetensorsFile::open(path);
        if (!file) return file.failure();
        for (const auto& [name, tensor] : (*file)->tensors()) {
            const std::string suffix = ".weight";
            const bool isWeight = name.size() > suffix.size() && name.ends_with(suffix);
            if (isWeight && m_linears.count(name.substr(0, name.size() - suffix.size()))) continue;
            if (auto it = m_replaced.find(name); it != m_replaced.end()) {
                if (!isFloatDType(tensor.dtype) || size_t(tensor.numElements()) != it->second.size())
                    return makeError(path.string() + ": tensor '" + name + "' (" + dtypeName(tensor.dtype) + " " +
                                     shapeToString(tensor.shape) + ") cannot take " +
                                     std::to_string(it->second.size()) + " new float values");
                out.addFloat(name, tensor.dtype, tensor.shape, it->second);
                replacedSeen.insert(name);
                continue;
            }
            std::vector<std::byte> bytes(tensor.data, tensor.data + tensor.numBytes);
            out.add(name, tensor.dtype, tensor.shape, std::move(bytes));
        }
    }
    for (const auto& [name, values] : m_replaced)
        if (!replacedSeen.count(name)) return makeError(m_sourceDir.string() + ": has no tensor '" + name + "'");
    for (const auto& [prefix, packed] : m_linears) {
        out.add(prefix + ".qweight", DType::I32, packed.qweightShape, packed.qweight);
        out.add(prefix + ".qzeros", DType::I32, packed.qzerosShape, packed.qzeros);
        out.add(prefix + ".scales", DType::F16, packed.scalesShape, packed.scales);
    }
    out.setMetadata("format", "pt");
    return out.write(outDir / "model.safetensors");
}

Result<void> QuantizedCheckpointWriter::writeConfig(const std::filesystem::path& outDir) const
{
    const std::filesystem::path source = m_sourceDir / "config.json";
    auto text = readRegularFile(source);  // read and depth-checked once already, when the model loaded
    if (!text) return text.failure();
    OrderedJson config;
    try {
        config = OrderedJson::parse(*text);
    } catch (const nlohmann::json::exception& e) {
        return makeError(source.string() + ": " + e.what());
    }
    if (!config.is_object()) return makeError(source.string() + ": is not a JSON object");
    OrderedJson quantization = {{"quant_method", "awq"},
                                {"bits", m_spec.bits},
                                {"group_size", m_spec.groupSize},
                                {"zero_point", true},
                                {"version", "gemm"}};
    // Same tensor format either way; the key tells people how the scales were chosen.
    if (m_spec.method == "rtn") quantization["brook_method"] = "rtn";
    config["quantization_config"] = std::move(quantization);
    return writeText(outDir / "config.json", config.dump(2) + "\n");
}

Result<void> QuantizedCheckpointWriter::copyOtherFiles(const std::filesystem::path& outDir) const
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(m_sourceDir, ec)) {
        if (!entry.is_regular_file()) continue;
        const std::filesystem::path& path = entry.path();
        const std::string name = path.filename().string();
        if (name.empty() || name[0] == '.' || name == "config.json" || name == "quantization_report.json" ||
            isWeightFile(path))
            continue;
        std::filesystem::copy_file(path, outDir / name, std::filesystem::copy_options::overwrite_existing, ec);
        if (ec)
            return makeError((outDir / name).string() + ": cannot copy from " + path.string() + ": " + ec.message());
    }
    if (ec) return makeError(m_sourceDir.string() + ": cannot list the folder: " + ec.message());
    return {};
}

Result<void> QuantizedCheckpointWriter::writeReport(const std::filesystem::path& outDir) const
{
    OrderedJson linears = OrderedJson::array();
    double weightSum = 0.0, awqSum = 0.0, rtnSum = 0.0;
    int searched = 0;
    for (const QuantizedLinearReport& r : m_reports) {
        OrderedJson entry = {{"name", r.name}, {"shape", {r.rows, r.cols}}, {"weight_error", r.weightError}};
        if (r.searched) {
            entry["rtn_weight_error"] = r.rtnWeightError;
            entry["alpha"] = r.alpha;
            entry["awq_output_error"] = r.awqOutputError;
            entry["rtn_output_error"] = r.rtnOutputError;
            awqSum += r.awqOutputError;
            rtnSum += r.rtnOutputError;
            ++searched;
        }
        weightSum += r.weightError;
        linears.push_back(std::move(entry));
    }
    OrderedJson summary = {{"linears", m_reports.size()},
                           {"mean_weight_error", m_reports.empty() ? 0.0 : weightSum / double(m_reports.size())}};
    if (searched > 0) {
        summary["mean_awq_output_error"] = awqSum / searched;
        summary["mean_rtn_output_error"] = rtnSum / searched;
    }
    OrderedJson report = {{"method", m_spec.method},
                          {"bits", m_spec.bits},
                          {"group_size", m_spec.groupSize},
                          {"source", std::filesystem::absolute(m_sourceDir).string()},
                          {"calibration_tokens", m_spec.calibrationTokens},
                          {"definitions",
                           {{"weight_error", "||W - W_eff||_F / ||W||_F, W_eff the weight the quantized model uses"},
                            {"awq_output_error", "||X W^T - X W_eff^T||_F / ||X W^T||_F on the calibration sample, "
                                                 "for the Linear's input group"},
                            {"rtn_output_error", "the same for plain round-to-nearest"}}},
                          {"notes", m_spec.notes},
                          {"summary", std::move(summary)},
                          {"linears", std::move(linears)}};
    return writeText(outDir / "quantization_report.json", report.dump(2) + "\n");
}

}  // namespace brook
