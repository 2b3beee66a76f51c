// readRegularFile: the whole text of a small file from a model folder (config.json, the
// tokenizer JSON files, a safetensors index). Such files are untrusted input: only a regular
// file is read (a FIFO would block the load forever, /dev/zero never ends), and only up to a
// size no real config reaches, so a hostile folder costs an error, not a hang or gigabytes.
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace brook {

// Far above any real config or tokenizer_config.json (the largest are a few MiB).
constexpr uint64_t kMaxJsonFileBytes = 64ull << 20;

// Errors name the path: missing, not a regular file, larger than maxBytes, unreadable.
Result<std::string> readRegularFile(const std::filesystem::path& path, uint64_t maxBytes = kMaxJsonFileBytes);

}  // namespace brook
