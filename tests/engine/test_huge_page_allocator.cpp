// HugePageAllocator: large buffers are 2 MB aligned and, where the kernel's transparent huge
// pages are on ("always" or "madvise"), get huge pages when first touched; small buffers and
// CpuMatrix storage still behave as plain vectors.
#include "engine/cpu/cpu_matrix.h"
#include "engine/cpu/huge_page_allocator.h"

#include <QtTest/QtTest>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

using namespace brook::cpu;

namespace {

// The kernel's THP mode: the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled.
std::string thpMode()
{
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    std::getline(in, line);
    const auto open = line.find('['), close = line.find(']');
    return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// AnonHugePages (kB) of the mapping that contains address p, from /proc/self/smaps.
long anonHugeKbAt(const void* p)
{
    const auto address = reinterpret_cast<uintptr_t>(p);
    std::ifstream in("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        uintptr_t lo = 0, hi = 0;
        char dash = 0;
        std::istringstream header(line);
        if (header >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = address >= lo && address < hi;
            continue;
        }
        if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
    }
    return -1;
}

}  // namespace

class TestHugePageAllocator : public QObject {
    Q_OBJECT

private slots:
    void smallBuffersAreOrdinary()
    {
        HugePageVector<float> v(1000, 1.5f);
        QCOMPARE(v.size(), size_t(1000));
        QCOMPARE(v[999], 1.5f);
        QCOMPARE(reinterpret_cast<uintptr_t>(v.data()) % 64, uintptr_t(0));
    }

    void largeBuffersGetHugePages()
    {
#if !defined(__linux__)
        QSKIP("transparent huge pages are Linux's");
#else
        HugePageVector<uint16_t> v(size_t(8) << 20, 7);  // 16 MB, zero-filled = first touch
        QCOMPARE(reinterpret_cast<uintptr_t>(v.data()) % HugePageAllocator<uint16_t>::kHugePage, uintptr_t(0));
        QCOMPARE(v.back(), uint16_t(7));
        const std::string mode = thpMode();
        if (mode != "always" && mode != "madvise") QSKIP(("THP mode here: " + mode).c_str());
        // The kernel may fall back to 4 KB pages when it has no free 2 MB page; of 8 huge pages
        // at least one must be there.
        QVERIFY2(anonHugeKbAt(v.data()) >= 2048, "no huge page behind a 16 MB weight buffer");
#endif
    }

    void matrixStorageSurvivesCopyAndMove()
    {
        const CpuMatrix m = CpuMatrix::fromBf16(2048, 1024, [](int n, uint16_t* row) {
            for (int k = 0; k < 1024; ++k) row[k] = floatToBf16(float((n + k) % 7));
        });
        CpuMatrix copy = m;
        const CpuMatrix moved = std::move(copy);
        QCOMPARE(moved.at(2047, 1023), float((2047 + 1023) % 7));
        QCOMPARE(moved.at(5, 3), m.at(5, 3));
    }
};

QTEST_GUILESS_MAIN(TestHugePageAllocator)
#include "test_huge_page_allocator.moc"
