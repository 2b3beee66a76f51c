// SafetensorsWriter: writes tensors to a .safetensors file (test models, quantized checkpoints).
#pragma once

#include "engine/result.h"
#include "engine/tensor_view.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace brook {

class SafetensorsWriter {
public:
    // Takes the bytes; `bytes.size()` must equal dtypeSize(dtype) x product(shape) (a mismatch
    // is reported by write()). Adding a name twice replaces the earlier tensor.
    void add(const std::string& name, DType dtype, std::vector<int64_t> shape, std::vector<std::byte> bytes);
    // Converts fp32 values to `dtype` (F32, F16 or BF16; round to nearest even).
    void addFloat(const std::string& name, DType dtype, std::vector<int64_t> shape, const std::vector<float>& values);
    void setMetadata(const std::string& key, const std::string& value);
    // Bytes of tensor data added so far (an index's "total_size").
    size_t totalBytes() const;
    Result<void> write(const std::filesystem::path& path) const;

private:
    struct Entry {
        DType dtype;
        std::vector<int64_t> shape;
        std::vector<std::byte> bytes;
    };
    std::map<std::string, Entry> m_entries;
    std::map<std::string, std::string> m_metadata;
    std::string m_error;  // the first bad add(), reported by write()
};

}  // namespace brook
