// HugePageAllocator: a std::allocator for the CPU backend's weight matrices that asks Linux for
// transparent huge pages (2 MB) on large buffers.
//
// Why: a decode step streams every weight once (721 MB for ERNIE-0.3B in bf16), and with 4 KB
// pages that is 180,000 TLB misses a token, plus the hardware prefetchers stop at every 4 KB
// page boundary. Debian's default THP mode is "madvise", so anonymous memory gets huge pages only
// when asked, and only if asked before the pages are first touched: hence an allocator (the
// vector's zero-fill is the first touch) rather than an madvise after loading. On this machine
// type a two-thread read of 720 MB went from 41-48 GB/s to 65 GB/s (docs/benchmarks.md).
// Elsewhere (Windows needs a privilege for large pages; macOS has none) it is plain new/delete.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

#if defined(__linux__)
#include <cstdlib>
#include <sys/mman.h>
#endif

namespace brook::cpu {

template <typename T>
class HugePageAllocator {
public:
    using value_type = T;
    static constexpr size_t kHugePage = size_t(2) << 20;

    HugePageAllocator() = default;
    template <typename U>
    HugePageAllocator(const HugePageAllocator<U>&) noexcept
    {}

    T* allocate(size_t n)
    {
        const size_t bytes = n * sizeof(T);
#if defined(__linux__)
        if (bytes >= kHugePage) {
            const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
            void* p = std::aligned_alloc(kHugePage, rounded);
            if (!p) throw std::bad_alloc();
            // Advice only: where THP is off the buffer simply keeps 4 KB pages.
            madvise(p, rounded, MADV_HUGEPAGE);
            return static_cast<T*>(p);
        }
#endif
        return static_cast<T*>(::operator new(bytes, std::align_val_t(64)));
    }

    void deallocate(T* p, size_t n) noexcept
    {
#if defined(__linux__)
        if (n * sizeof(T) >= kHugePage) {
            std::free(p);
            return;
        }
#endif
        ::operator delete(p, std::align_val_t(64));
    }

    template <typename U>
    bool operator==(const HugePageAllocator<U>&) const noexcept
    {
        return true;
    }
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace brook::cpu
