// SafetensorsFile: one memory-mapped .safetensors file. The header is validated on open
// (JSON well formed and shallow, metadata string to string, sizes matching dtype x shape,
// tensors covering the data section exactly, without overlaps, holes or trailing bytes), so
// a truncated or corrupt file is an error naming the file and tensor, never a crash later.
#pragma once

#include "engine/result.h"
#include "engine/tensor_view.h"

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>

namespace brook {

// What a safetensors file holds, its tensors' data pointing into the bytes it was parsed from.
struct SafetensorsContents {
    std::map<std::string, TensorView> tensors;
    std::map<std::string, std::string> metadata;
};

// Parses and validates the bytes of a whole safetensors file (length, header, data section).
// `path` names the file in errors and its file name goes into each TensorView. Never throws.
Result<SafetensorsContents> parseSafetensors(std::span<const std::byte> bytes, const std::filesystem::path& path);

class SafetensorsFile {
public:
    // Maps `path` (a regular file only: never blocks on a FIFO) and parses it.
    static Result<std::unique_ptr<SafetensorsFile>> open(const std::filesystem::path& path);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::map<std::string, TensorView>& tensors() const { return m_contents.tensors; }
    const TensorView* find(const std::string& name) const;
    const std::map<std::string, std::string>& metadata() const { return m_contents.metadata; }
    const std::filesystem::path& path() const { return m_path; }

private:
    SafetensorsFile() = default;
    std::filesystem::path m_path;
    void* m_mapping = nullptr;
    size_t m_mappingSize = 0;
    SafetensorsContents m_contents;
};

}  // namespace brook
