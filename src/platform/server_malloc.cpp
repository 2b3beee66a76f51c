#include "platform/server_malloc.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#endif

namespace brook {

namespace {

constexpr int kArenas = 2;

// Carries the user's own GLIBC_TUNABLES across the re-execution, so that the re-executed process
// can put it back: glibc has read the settings by then, and the programs Brook starts (a browser,
// the file manager) should run with the user's environment, not with a server's malloc.
// "=" + value when the user had one, "" when they had none.
constexpr const char* kSavedTunables = "BROOK_USER_GLIBC_TUNABLES";

bool hasKey(std::string_view tunables, std::string_view key)
{
    for (size_t at = 0; at <= tunables.size();) {
        const size_t end = std::min(tunables.find(':', at), tunables.size());
        const std::string_view item = tunables.substr(at, end - at);
        if (item.substr(0, item.find('=')) == key) return true;
        at = end + 1;
    }
    return false;
}

}  // namespace

std::string serverMallocTunables(std::string_view current)
{
    std::string tunables(current);
    auto add = [&](std::string_view key, std::string_view value) {
        if (hasKey(tunables, key)) return;
        if (!tunables.empty()) tunables += ':';
        tunables.append(key).append("=").append(value);
    };
    if (!std::getenv("MALLOC_ARENA_MAX")) add("glibc.malloc.arena_max", std::to_string(kArenas));
    add("glibc.malloc.tcache_count", "0");
    return tunables;
}

void useServerMalloc(char** argv)
{
#if defined(__GLIBC__)
    const char* current = std::getenv("GLIBC_TUNABLES");
    const std::string wanted = serverMallocTunables(current ? current : "");
    if (current && wanted == current) {  // set (by the re-execution below, or by the user)
        if (const char* saved = std::getenv(kSavedTunables)) {
            if (saved[0] == '=') setenv("GLIBC_TUNABLES", saved + 1, 1);
            else unsetenv("GLIBC_TUNABLES");
            unsetenv(kSavedTunables);
        }
        return;
    }
    // No logger is set up this early, and a failure here only costs memory: stderr, then go on.
    const bool hadTunables = current != nullptr;
    const std::string users = current ? current : "";  // a copy: setenv may free what getenv gave
    const std::string saved = hadTunables ? "=" + users : std::string();
    if (setenv(kSavedTunables, saved.c_str(), 1) == 0 && setenv("GLIBC_TUNABLES", wanted.c_str(), 1) == 0 &&
        argv && argv[0]) {
        execv("/proc/self/exe", argv);
        std::fprintf(stderr, "brook: cannot re-execute with GLIBC_TUNABLES=%s (%s); capping malloc arenas only\n",
                     wanted.c_str(), std::strerror(errno));
    }
    // Not re-executed: the environment stays as the user had it.
    if (hadTunables) setenv("GLIBC_TUNABLES", users.c_str(), 1);
    else unsetenv("GLIBC_TUNABLES");
    unsetenv(kSavedTunables);
    if (!std::getenv("MALLOC_ARENA_MAX")) mallopt(M_ARENA_MAX, kArenas);
#else
    (void)argv;
#endif
}

}  // namespace brook
