// SafetensorsFile: maps a .safetensors file read-only and validates its header up front.
// Layout (github.com/huggingface/safetensors): u64 little-endian N, N bytes of JSON header,
// then the data section; each tensor's data_offsets are relative to the data section.
// The mapping is the only platform-specific part (POSIX mmap, or MapViewOfFile on Windows).
#include "engine/safetensors_file.h"

#include "engine/bounded_json.h"

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
// A header nests three levels; metadata values are strings.
constexpr int kMaxHeaderDepth = 8;

struct Mapping {
    void* address = nullptr;
    size_t size = 0;
};

#ifdef _WIN32
Result<Mapping> mapReadOnly(const std::filesystem::path& path)
{
    HANDLE file = CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                              FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) return makeError(path.string() + ": cannot open file");
    if (GetFileType(file) != FILE_TYPE_DISK) {
        CloseHandle(file);
        return makeError(path.string() + ": not a regular file");
    }
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

void unmap(void* address, size_t)
{
    if (address) UnmapViewOfFile(address);
}
#else
Result<Mapping> mapReadOnly(const std::filesystem::path& path)
{
    // O_NONBLOCK: open() of a FIFO would otherwise wait for a writer forever; fstat then refuses it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return makeError(path.string() + ": cannot open file: " + std::strerror(errno));
    struct stat st {};
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

void unmap(void* address, size_t size)
{
    if (address) ::munmap(address, size);
}
#endif

// Parses one header entry into `view` (without the data pointer). Returns an error text or "".
std::string parseEntry(const std::string& name, const nlohmann::json& entry, uint64_t& begin, uint64_t& end,
                       TensorView& view)
{
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

    // dtype size x the non-zero dimensions must fit in 63 bits, so numElements() and byte counts
    // cannot overflow in any order of multiplication (a zero dimension does not excuse the rest).
    constexpr uint64_t kMaxBytes = uint64_t(std::numeric_limits<int64_t>::max());
    uint64_t bytes = dtypeSize(view.dtype);
    bool zero = false;
    for (const auto& dim : *shapeIt) {
        if (!dim.is_number_unsigned()) return where + ": shape entries must be non-negative integers";
        const uint64_t d = dim.get<uint64_t>();
        view.shape.push_back(int64_t(d > kMaxBytes ? -1 : d));
        if (d == 0) {
            zero = true;
            continue;
        }
        if (d > kMaxBytes / bytes)
            return where + ": shape entry " + std::to_string(d) + " is too large (" + dtypeText +
                   " x shape overflows 63 bits)";
        bytes *= d;
    }
    const uint64_t expected = zero ? 0 : bytes;

    for (const auto& offset : *offsetsIt) {
        if (!offset.is_number_unsigned()) return where + ": data_offsets must be non-negative integers";
    }
    begin = (*offsetsIt)[0].get<uint64_t>();
    end = (*offsetsIt)[1].get<uint64_t>();
    if (end < begin)
        return where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
               "] end before they begin";
    if (end - begin != expected)
        return where + ": data_offsets span " + std::to_string(end - begin) + " bytes, but " + dtypeText + " " +
               shapeToString(view.shape) + " needs " + std::to_string(expected);
    view.numBytes = size_t(expected);
    return {};
}

struct Span {
    uint64_t begin, end;
    std::string name;
};

std::string spanText(const Span& span)
{
    return "tensor '" + span.name + "' (bytes " + std::to_string(span.begin) + ".." + std::to_string(span.end) +
           " of the data section)";
}

// The format requires the tensors to tile the data section: sorted by offset, each begins
// where the previous ends, the first at 0 and the last at the end. Returns an error text or "".
std::string checkCoverage(std::vector<Span>& spans, uint64_t dataSize)
{
    // Zero-byte tensors may share an offset; sorting by end too puts them before a tensor there.
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
    // The first tensor (in file order) that does not fit names a truncation.
    for (const Span& span : spans) {
        if (span.end > dataSize)
            return spanText(span) + " runs past the end of the file (" + std::to_string(dataSize) +
                   " data bytes); the file is truncated";
    }
    uint64_t covered = 0;
    const Span* previous = nullptr;
    for (const Span& span : spans) {
        if (span.begin < covered)
            return "data_offsets overlap: " + spanText(span) + " begins inside " + spanText(*previous);
        if (span.begin > covered)
            return "data_offsets leave a hole: bytes " + std::to_string(covered) + ".." + std::to_string(span.begin) +
                   " of the data section belong to no tensor (before " + spanText(span) + ")";
        covered = span.end;
        previous = &span;
    }
    if (covered != dataSize)
        return std::to_string(dataSize - covered) + " trailing bytes after the last tensor (the data section has " +
               std::to_string(dataSize) + " bytes, data_offsets cover " + std::to_string(covered) + ")";
    return {};
}

}  // namespace

Result<SafetensorsContents> parseSafetensors(std::span<const std::byte> bytes, const std::filesystem::path& path)
{
    const std::string name = path.string();
    const uint64_t fileSize = bytes.size();
    if (fileSize < 8)
        return makeError(name + ": not a safetensors file (" + std::to_string(fileSize) +
                         " bytes, too short for the 8-byte header length)");
    uint64_t headerLength = 0;
    for (int i = 7; i >= 0; --i)
        headerLength = (headerLength << 8) | uint64_t(std::to_integer<uint8_t>(bytes[size_t(i)]));
    if (headerLength > fileSize - 8)
        return makeError(name + ": header length " + std::to_string(headerLength) + " runs past the end of the file (" +
                         std::to_string(fileSize) + " bytes); the file is truncated or not a safetensors file");
    if (headerLength > kMaxHeaderBytes)
        return makeError(name + ": header length " + std::to_string(headerLength) + " is implausibly large");
    if (headerLength < 2 || std::to_integer<char>(bytes[8]) != '{')
        return makeError(name + ": not a safetensors file (the header is not a JSON object)");

    const std::string_view headerText(reinterpret_cast<const char*>(bytes.data() + 8), size_t(headerLength));
    // A real header nests three levels ({"name": {"shape": [...]}}); anything deep is hostile.
    if (jsonNestingDepth(headerText, kMaxHeaderDepth) > kMaxHeaderDepth)
        return makeError(name + ": not a safetensors file (the header nests deeper than " +
                         std::to_string(kMaxHeaderDepth) + " levels)");
    nlohmann::json header = nlohmann::json::parse(headerText.begin(), headerText.end(), nullptr, false);
    if (header.is_discarded() || !header.is_object())
        return makeError(name + ": not a safetensors file (the header is not valid JSON)");

    const uint64_t dataSize = fileSize - 8 - headerLength;
    const std::byte* data = bytes.data() + 8 + headerLength;
    const std::string fileName = path.filename().string();
    SafetensorsContents contents;
    std::vector<Span> spans;
    for (const auto& [key, entry] : header.items()) {
        if (key == "__metadata__") {
            // The format says string to string; anything else is a broken or hostile writer.
            if (!entry.is_object()) return makeError(name + ": __metadata__ is not an object");
            for (const auto& [metaKey, metaValue] : entry.items()) {
                if (!metaValue.is_string())
                    return makeError(name + ": __metadata__ value of '" + metaKey + "' is " + metaValue.type_name() +
                                     ", not a string (safetensors metadata maps strings to strings)");
                contents.metadata[metaKey] = metaValue.get<std::string>();
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
        contents.tensors.emplace(key, std::move(view));
    }
    if (std::string problem = checkCoverage(spans, dataSize); !problem.empty()) return makeError(name + ": " + problem);
    for (const Span& span : spans) contents.tensors.at(span.name).data = data + span.begin;
    return contents;
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::open(const std::filesystem::path& path)
{
    auto mapped = mapReadOnly(path);
    if (!mapped) return mapped.failure();
    std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
    file->m_path = path;
    file->m_mapping = mapped->address;
    file->m_mappingSize = mapped->size;  // from here on the destructor unmaps

    auto contents = parseSafetensors({static_cast<const std::byte*>(mapped->address), mapped->size}, path);
    if (!contents) return contents.failure();
    file->m_contents = std::move(contents.value());
    spdlog::debug("opened {}: {} tensors, {} bytes", path.string(), file->m_contents.tensors.size(), mapped->size);
    return file;
}

SafetensorsFile::~SafetensorsFile() { unmap(m_mapping, m_mappingSize); }

const TensorView* SafetensorsFile::find(const std::string& name) const
{
    auto it = m_contents.tensors.find(name);
    return it == m_contents.tensors.end() ? nullptr : &it->second;
}

}  // namespace brook
