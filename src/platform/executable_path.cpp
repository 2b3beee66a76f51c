#include "platform/executable_path.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#endif

namespace brook {
namespace {

std::mutex g_argv0Mutex;
std::string g_argv0;

std::filesystem::path canonicalOrEmpty(const std::filesystem::path& path)
{
    std::error_code ec;
    auto resolved = std::filesystem::weakly_canonical(path, ec);
    if (ec || !std::filesystem::is_regular_file(resolved, ec)) return {};
    return resolved;
}

// argv[0] with a slash is relative to the start-up directory; without one the shell found it on PATH.
std::filesystem::path fromArgv0(const std::string& argv0)
{
    if (argv0.empty()) return {};
    if (argv0.find('/') != std::string::npos) return canonicalOrEmpty(std::filesystem::absolute(argv0));
    const char* pathVariable = std::getenv("PATH");
    if (!pathVariable) return {};
    const std::string path = pathVariable;
    for (size_t begin = 0; begin <= path.size();) {
        const size_t end = std::min(path.find(':', begin), path.size());
        const std::string folder = path.substr(begin, end - begin);
        if (auto found = canonicalOrEmpty(std::filesystem::path(folder.empty() ? "." : folder) / argv0); !found.empty())
            return found;
        begin = end + 1;
    }
    return {};
}

}  // namespace

void rememberArgv0(const char* argv0)
{
    std::lock_guard lock(g_argv0Mutex);
    g_argv0 = argv0 ? argv0 : "";
}

std::filesystem::path executablePath()
{
#ifdef _WIN32
    std::vector<wchar_t> buffer(MAX_PATH);
    for (;;) {
        const DWORD length = GetModuleFileNameW(nullptr, buffer.data(), static_cast<DWORD>(buffer.size()));
        if (length == 0) break;
        if (length < buffer.size()) return canonicalOrEmpty(std::filesystem::path(std::wstring(buffer.data(), length)));
        if (buffer.size() >= 32768) break;  // the longest path Windows has
        buffer.resize(buffer.size() * 2);
    }
#else
    std::error_code ec;
    if (auto self = std::filesystem::read_symlink("/proc/self/exe", ec); !ec) {
        if (auto resolved = canonicalOrEmpty(self); !resolved.empty()) return resolved;
    }
#endif
    std::lock_guard lock(g_argv0Mutex);
    return fromArgv0(g_argv0);
}

}  // namespace brook
