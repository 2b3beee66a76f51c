// SafetensorsWriter: lays tensors out in name order behind a compact JSON header that is padded
// with spaces to a multiple of 8 bytes (allowed by the format), so every tensor's data starts
// 8-byte aligned relative to the file start.
#include "engine/safetensors_writer.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace brook {

void SafetensorsWriter::add(const std::string& name, DType dtype, std::vector<int64_t> shape,
                            std::vector<std::byte> bytes)
{
    int64_t elements = 1;
    bool badShape = false;
    for (int64_t d : shape) {
        if (d < 0) badShape = true;
        elements *= d;
    }
    const size_t expected = badShape ? 0 : size_t(elements) * dtypeSize(dtype);
    if (m_error.empty() && (dtype == DType::Unknown || badShape || bytes.size() != expected)) {
        m_error = "tensor '" + name + "': " + std::to_string(bytes.size()) + " bytes given, but " + dtypeName(dtype) +
                  " of its shape needs " + std::to_string(expected);
    }
    m_entries[name] = Entry{dtype, std::move(shape), std::move(bytes)};
}

void SafetensorsWriter::addFloat(const std::string& name, DType dtype, std::vector<int64_t> shape,
                                 const std::vector<float>& values)
{
    if (!isFloatDType(dtype)) {
        if (m_error.empty()) m_error = std::string("tensor '") + name + "': addFloat cannot write " + dtypeName(dtype);
        return;
    }
    std::vector<std::byte> bytes(values.size() * dtypeSize(dtype));
    convertFromFloat32(values.data(), values.size(), dtype, bytes.data());
    add(name, dtype, std::move(shape), std::move(bytes));
}

void SafetensorsWriter::setMetadata(const std::string& key, const std::string& value) { m_metadata[key] = value; }

size_t SafetensorsWriter::totalBytes() const
{
    size_t total = 0;
    for (const auto& [name, entry] : m_entries) total += entry.bytes.size();
    return total;
}

Result<void> SafetensorsWriter::write(const std::filesystem::path& path) const
{
    if (!m_error.empty()) return makeError(path.string() + ": " + m_error);

    nlohmann::json header = nlohmann::json::object();
    if (!m_metadata.empty()) header["__metadata__"] = m_metadata;
    uint64_t offset = 0;
    for (const auto& [name, entry] : m_entries) {
        header[name] = {{"dtype", dtypeName(entry.dtype)},
                        {"shape", entry.shape},
                        {"data_offsets", {offset, offset + entry.bytes.size()}}};
        offset += entry.bytes.size();
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');

    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return makeError(path.string() + ": cannot create file: " + std::strerror(errno));
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(uint64_t(text.size()) >> (8 * i));
    out.write(reinterpret_cast<const char*>(length), 8);
    out.write(text.data(), std::streamsize(text.size()));
    for (const auto& [name, entry] : m_entries) {
        out.write(reinterpret_cast<const char*>(entry.bytes.data()), std::streamsize(entry.bytes.size()));
    }
    out.close();
    if (!out) return makeError(path.string() + ": write failed: " + std::strerror(errno));
    spdlog::debug("wrote {}: {} tensors, {} data bytes", path.string(), m_entries.size(), offset);
    return {};
}

}  // namespace brook
