// SafetensorsFile: one memory-mapped .safetensors file. The header is validated on open
// (JSON well formed, offsets inside the file, sizes matching dtype x shape), so a truncated
// or corrupt file is an error naming the file and tensor, never a crash later.
#pragma once

#include "engine/result.h"
#include "engine/tensor_view.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace brook {

class SafetensorsFile {
public:
    static Result<std::unique_ptr<SafetensorsFile>> open(const std::filesystem::path& path);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::map<std::string, TensorView>& tensors() const { return m_tensors; }
    const TensorView* find(const std::string& name) const;
    const std::map<std::string, std::string>& metadata() const { return m_metadata; }
    const std::filesystem::path& path() const { return m_path; }

private:
    SafetensorsFile() = default;
    std::filesystem::path m_path;
    void* m_mapping = nullptr;
    size_t m_mappingSize = 0;
    std::map<std::string, TensorView> m_tensors;
    std::map<std::string, std::string> m_metadata;
};

} // namespace brook
