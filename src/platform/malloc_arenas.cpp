#include "platform/malloc_arenas.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace brook {

namespace {

bool userChoseArenaCap()
{
    if (std::getenv("MALLOC_ARENA_MAX")) return true;
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    return tunables && std::strstr(tunables, "glibc.malloc.arena_max");
}

}  // namespace

int capMallocArenas(int maxArenas)
{
#if defined(__GLIBC__)
    if (maxArenas < 1 || userChoseArenaCap()) return 0;
    return mallopt(M_ARENA_MAX, maxArenas) == 1 ? maxArenas : 0;
#else
    (void)maxArenas;
    return 0;
#endif
}

}  // namespace brook
