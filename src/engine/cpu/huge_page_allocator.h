// HugePageAllocator: a std::allocator for the CPU backend's weight matrices that puts large
// buffers on transparent huge pages (engine/huge_pages.h says why). An allocator rather than an
// madvise after loading, because the vector's zero-fill is the first touch and THP must be asked
// for before it. On this machine type a two-thread read of 720 MB went from 41-48 GB/s to
// 65 GB/s (docs/benchmarks.md).
#pragma once

#include "engine/huge_pages.h"

#include <cstddef>
#include <vector>

namespace brook::cpu {

template <typename T>
class HugePageAllocator {
public:
    using value_type = T;
    static constexpr size_t kHugePage = kHugePageBytes;

    HugePageAllocator() = default;
    template <typename U>
    HugePageAllocator(const HugePageAllocator<U>&) noexcept
    {}

    T* allocate(size_t n) { return static_cast<T*>(allocateHugePageBacked(n * sizeof(T))); }
    void deallocate(T* p, size_t n) noexcept { freeHugePageBacked(p, n * sizeof(T)); }

    template <typename U>
    bool operator==(const HugePageAllocator<U>&) const noexcept
    {
        return true;
    }
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace brook::cpu
