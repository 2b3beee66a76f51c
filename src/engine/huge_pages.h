// Large buffers on transparent huge pages (2 MB) where Linux gives them: the CPU backend's weight
// matrices (cpu/huge_page_allocator.h) and the grammar automaton's state chunks and mask slabs.
//
// Why: a buffer streamed whole (a decode step reads every weight once) on 4 KB pages costs a TLB
// miss every 4 KB and stops the hardware prefetchers at each page boundary; and in a VM the first
// touch of a 4 KB page costs ~15 us, against ~1.8 us per 4 KB when a 2 MB page is free
// (docs/benchmarks.md). Debian's THP default is "madvise": anonymous memory gets huge pages only
// when asked, and only if asked before its first touch. Elsewhere (Windows needs a privilege for
// large pages; macOS has none) these are plain aligned new/delete.
#pragma once

#include <cstddef>
#include <new>

#if defined(__linux__)
#include <cstdlib>
#include <sys/mman.h>
#endif

namespace brook {

inline constexpr size_t kHugePageBytes = size_t(2) << 20;

// At least `bytes`, 64-byte aligned; on Linux, from 2 MB on, 2 MB aligned and rounded up to whole
// huge pages, advised MADV_HUGEPAGE before anything touches it. Free with freeHugePageBacked and
// the same `bytes`.
inline void* allocateHugePageBacked(size_t bytes)
{
#if defined(__linux__)
    if (bytes >= kHugePageBytes) {
        const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
        void* p = std::aligned_alloc(kHugePageBytes, rounded);
        if (!p) throw std::bad_alloc();
        madvise(p, rounded, MADV_HUGEPAGE);  // advice only: where THP is off the buffer keeps 4 KB pages
        return p;
    }
#endif
    return ::operator new(bytes, std::align_val_t(64));
}

inline void freeHugePageBacked(void* p, size_t bytes) noexcept
{
#if defined(__linux__)
    if (bytes >= kHugePageBytes) {
        std::free(p);
        return;
    }
#endif
    ::operator delete(p, std::align_val_t(64));
}

}  // namespace brook
