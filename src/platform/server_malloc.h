// glibc's malloc set up for a process that serves for days: two arenas and no per-thread cache.
//
// Why, measured (docs/benchmarks.md, "Reliability"): brook-serve runs hundreds of HTTP worker
// threads. With glibc's defaults each thread could get its own arena (up to eight per core) and
// keeps a per-thread cache ("tcache") of freed blocks; the soak's resident memory crept up for as
// long as it ran, although Brook's live heap (heaptrack) stayed flat. Two arenas alone still grew
// (+5.4% in 12 minutes), and so did no tcache alone (+8.3%); together the soak plateaus (+0.4%
// down over its last 6 minutes). The cost is a lock per malloc on two arenas, which the serving
// path does far too rarely to show in the benchmarks.
// glibc reads the tcache setting only at start (GLIBC_TUNABLES), so useServerMalloc re-executes
// the program once with it set. Elsewhere (Windows, musl) there is nothing to set: no-op.
#pragma once

#include <string>
#include <string_view>

namespace brook {

// GLIBC_TUNABLES with the server's settings added to `current` (the user's value, maybe empty). A
// key the user set keeps their value; MALLOC_ARENA_MAX in the environment counts as their arena
// setting.
std::string serverMallocTunables(std::string_view current);

// Call first in main(), before any thread starts. Under glibc, when GLIBC_TUNABLES lacks the
// settings, sets them and re-executes this program (/proc/self/exe) with the same arguments, so
// it returns only in the re-executed process, with GLIBC_TUNABLES put back as the user had it (glibc
// has read it by then; the programs this one starts get the user's environment). If that cannot be
// done it caps the arenas with mallopt (no tcache setting then), logs why, and returns.
void useServerMalloc(char** argv);

}  // namespace brook
