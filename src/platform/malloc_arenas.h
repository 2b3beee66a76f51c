// Caps how many heaps ("arenas") glibc's malloc keeps in a process with many threads.
//
// Why: glibc gives a thread its own arena when the one it used was busy, up to eight per core,
// and an arena keeps the pages of its own high-water mark. brook-serve runs hundreds of HTTP
// worker threads whose allocations peak at different moments, so the sum of every arena's peak
// crept up for as long as the soak ran (docs/benchmarks.md, "Reliability": arenas 74 -> 95 MiB
// in 35 minutes on 2 cores), although Brook's live heap stayed flat. With two arenas the peaks
// share their pages. The per-thread cache in front of malloc (tcache) still serves most small
// blocks without a lock, so the cost of sharing stays small.
// Elsewhere (Windows, musl) the allocator has no such setting: nothing is done.
#pragma once

namespace brook {

// The cap the server and the app use.
constexpr int kServerMallocArenas = 2;

// Caps malloc's arenas at `maxArenas` (>= 1) unless the user chose a cap themselves
// (MALLOC_ARENA_MAX, or arena_max in GLIBC_TUNABLES): theirs wins. Call it first in main(),
// before any thread starts, since a thread keeps the arena it was first given. Returns the cap
// now in force from this call, or 0 when it set none (the user's own, or not glibc).
int capMallocArenas(int maxArenas);

}  // namespace brook
