// Where the running program's own file is, found without Qt so the Qt-free tools can locate the
// files installed beside them (Linux: /proc/self/exe, else argv[0] through PATH; Windows:
// GetModuleFileNameW).
#pragma once

#include <filesystem>

namespace brook {

// Thread-safe. Call once from main() with argv[0]: the fallback when the OS cannot say.
void rememberArgv0(const char* argv0);

// Thread-safe. The absolute path of the running executable, symlinks resolved; empty if unknown.
std::filesystem::path executablePath();

}  // namespace brook
