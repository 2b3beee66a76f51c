// SafetensorsFile: maps a .safetensors file read-only and validates its header up front.
// Layout (github.com/huggingface/safetensors): u64 little-endian N, N bytes of JSON header,
// then the data section; each tensor's data_offsets are relative to the data section.
// The mapping is the only platform-specific part (POSIX mmap, or MapViewOfFile on Windows).
#include "engine/safetensors_file.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace brook {

namespace {

// Headers beyond this are not checkpoints (the reference implementation refuses > 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

struct Mapping {
    void* address = nullptr;
    size_t size = 0;
};

#ifdef _WIN32
Result<Mapping> mapReadOnly(const std::filesystem::path& path) {
    HANDLE file = CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                              FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) return makeError(path.string() + ": cannot open file");
    LARGE_INTEGER size{};
    if (!GetFileSizeEx(file, &size)) {
        CloseHandle(file);
        return makeError(path.string() + ": cannot read the file size");
    }
    Mapping mapping;
    mapping.size = size_t(size.QuadPart);
    if (mapping.size == 0) {
        CloseHandle(file);
        return mapping;
    }
    HANDLE section = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
    CloseHandle(file);
    if (!section) return makeError(path.string() + ": cannot map file");
    mapping.address = MapViewOfFile(section, FILE_MAP_READ, 0, 0, 0);
    CloseHandle(section);
    if (!mapping.address) return makeError(path.string() + ": cannot map file");
    return mapping;
}

void unmap(void* address, size_t) {
    if (address) UnmapViewOfFile(address);
}
#else
Result<Mapping> mapReadOnly(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return makeError(path.string() + ": cannot open file: " + std::strerror(errno));
    struct stat st{};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return makeError(path.string() + ": cannot stat file: " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return makeError(path.string() + ": not a regular file");
    }
    Mapping mapping;
    mapping.size = size_t(st.st_size);
    if (mapping.size > 0) {
        void* address = ::mmap(nullptr, mapping.size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (address == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return makeError(path.string() + ": cannot map file: " + std::strerror(err));
        }
        mapping.address = address;
    }
    ::close(fd);  // the mapping keeps the file alive
    return mapping;
}

void unmap(void* address, size_t size) {
    if (address) ::munmap(address, size);
}
#endif

// Parses one header entry into `view` (without the data pointer). Returns an error text or "".
std::string parseEntry(const std::string& name, const nlohmann::json& entry, uint64_t& begin, uint64_t& end,
                       TensorView& view) {
    const std::string where = "tensor '" + name + "'";
    if (!entry.is_object()) return where + ": header entry is not an object";
    auto dtypeIt = entry.find("dtype");
    auto shapeIt = entry.find("shape");
    auto offsetsIt = entry.find("data_offsets");
    if (dtypeIt == entry.end() || !dtypeIt->is_string()) return where + ": missing or non-string 'dtype'";
    if (shapeIt == entry.end() || !shapeIt->is_array()) return where + ": missing or non-array 'shape'";
    if (offsetsIt == entry.end() || !offsetsIt->is_array() || offsetsIt->size() != 2)
        return where + ": 'data_offsets' must be an array of two integers";

    const std::string dtypeText = dtypeIt->get<std::string>();
    view.dtype = dtypeFromName(dtypeText);
    if (view.dtype == DType::Unknown)
        return where + ": unsupported dtype '" + dtypeText + "' (supported: F32, F16, BF16, I32, I8, U8, I64, F64)";

    uint64_t elements = 1;
    bool overflow = false;
    for (const auto& dim : *shapeIt) {
        if (!dim.is_number_unsigned()) return where + ": shape entries must be non-negative integers";
        const uint64_t d = dim.get<uint64_t>();
        if (d > uint64_t(std::numeric_limits<int64_t>::max())) return where + ": shape entry too large";
        if (d != 0 && elements > std::numeric_limits<uint64_t>::max() / d) overflow = true;
        elements *= d;
        view.shape.push_back(int64_t(d));
    }
    const uint64_t elementSize = dtypeSize(view.dtype);
    if (overflow || elements > std::numeric_limits<uint64_t>::max() / elementSize)
        return where + ": shape " + shapeToString(view.shape) + " is too large";

    for (const auto& offset : *offsetsIt) {
        if (!offset.is_number_unsigned()) return where + ": data_offsets must be non-negative integers";
    }
    begin = (*offsetsIt)[0].get<uint64_t>();
    end = (*offsetsIt)[1].get<uint64_t>();
    if (end < begin)
        return where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] end before they begin";
    const uint64_t expected = elements * elementSize;
    if (end - begin != expected)
        return where + ": data_offsets span " + std::to_string(end - begin) + " bytes, but " + dtypeText + " " +
               shapeToString(view.shape) + " needs " + std::to_string(expected);
    view.numBytes = size_t(expected);
    return {};
}

} // namespace

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::open(const std::filesystem::path& path) {
    auto mapped = mapReadOnly(path);
    if (!mapped) return makeError(mapped.error());
    std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
    file->m_path = path;
    file->m_mapping = mapped->address;
    file->m_mappingSize = mapped->size;  // from here on the destructor unmaps

    const std::string name = path.string();
    const uint64_t fileSize = mapped->size;
    const auto* bytes = static_cast<const std::byte*>(mapped->address);
    if (fileSize < 8)
        return makeError(name + ": not a safetensors file (" + std::to_string(fileSize) +
                         " bytes, too short for the 8-byte header length)");
    uint64_t headerLength = 0;
    for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | uint64_t(std::to_integer<uint8_t>(bytes[i]));
    if (headerLength > fileSize - 8)
        return makeError(name + ": header length " + std::to_string(headerLength) + " runs past the end of the file (" +
                         std::to_string(fileSize) + " bytes); the file is truncated or not a safetensors file");
    if (headerLength > kMaxHeaderBytes)
        return makeError(name + ": header length " + std::to_string(headerLength) + " is implausibly large");
    if (headerLength < 2 || std::to_integer<char>(bytes[8]) != '{')
        return makeError(name + ": not a safetensors file (the header is not a JSON object)");

    const char* headerBegin = reinterpret_cast<const char*>(bytes + 8);
    nlohmann::json header = nlohmann::json::parse(headerBegin, headerBegin + headerLength, nullptr, false);
    if (header.is_discarded() || !header.is_object())
        return makeError(name + ": not a safetensors file (the header is not valid JSON)");

    const uint64_t dataSize = fileSize - 8 - headerLength;
    const std::byte* data = bytes + 8 + headerLength;
    const std::string fileName = path.filename().string();
    struct Span {
        uint64_t begin, end;
        std::string name;
    };
    std::vector<Span> spans;
    for (const auto& [key, entry] : header.items()) {
        if (key == "__metadata__") {
            if (!entry.is_object()) return makeError(name + ": __metadata__ is not an object");
            for (const auto& [metaKey, metaValue] : entry.items()) {
                file->m_metadata[metaKey] = metaValue.is_string() ? metaValue.get<std::string>() : metaValue.dump();
            }
            continue;
        }
        TensorView view;
        view.name = key;
        view.file = fileName;
        uint64_t begin = 0, end = 0;
        std::string problem = parseEntry(key, entry, begin, end, view);
        if (!problem.empty()) return makeError(name + ": " + problem);
        spans.push_back({begin, end, key});
        file->m_tensors.emplace(key, std::move(view));
    }

    // The first tensor (in file order) that does not fit names a truncation.
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
    for (const Span& span : spans) {
        if (span.end > dataSize)
            return makeError(name + ": tensor '" + span.name + "' (bytes " + std::to_string(span.begin) + ".." +
                             std::to_string(span.end) + " of the data section) runs past the end of the file (" +
                             std::to_string(dataSize) + " data bytes); the file is truncated");
    }
    for (const Span& span : spans) file->m_tensors.at(span.name).data = data + span.begin;

    spdlog::debug("opened {}: {} tensors, {} bytes", name, file->m_tensors.size(), fileSize);
    return file;
}

SafetensorsFile::~SafetensorsFile() {
    unmap(m_mapping, m_mappingSize);
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
    auto it = m_tensors.find(name);
    return it == m_tensors.end() ? nullptr : &it->second;
}

} // namespace brook
