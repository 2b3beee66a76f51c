// Where a name from a hub's listing may land in the cache. Listings come from the network, and
// a repository path or blob name is joined onto a cache folder, so each one is checked first:
// relative, '/'-separated, no empty, "." or ".." part, and nothing Windows (a target) would read
// as a path or a device: no '\', no ':' (drive letters, alternate streams), no <>"|?*, no
// control characters, no part ending in '.' or ' ', no CON/PRN/AUX/NUL/COM1-9/LPT1-9.
// Pure functions; thread-safe.
#pragma once

#include "engine/result.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace brook {

// Why `path` may not be used under a cache folder; empty when it may.
std::string unsafePathReason(std::string_view path);
inline bool isSafeRelativePath(std::string_view path) { return unsafePathReason(path).empty(); }

// root / relative, when relative passes the checks above (and so stays inside root).
Result<std::filesystem::path> pathInside(const std::filesystem::path& root, std::string_view relative);

}  // namespace brook
