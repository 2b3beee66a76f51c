// releaseFreeHeapMemory and HeapTrimmer: the soak's fix for a resident set that creeps up to the
// heaps' high-water marks (docs/benchmarks.md, "Reliability").
#include "platform/heap_trimmer.h"

#include <QtTest>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include <unistd.h>

using namespace brook;

namespace {

double residentMiB()
{
    std::ifstream statm("/proc/self/statm");
    long pages = 0, resident = 0;
    statm >> pages >> resident;
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

}  // namespace

class TestHeapTrimmer : public QObject {
    Q_OBJECT

private slots:
    // The soak's pattern in miniature: blocks freed between blocks still alive. free() alone
    // keeps their pages resident (only a heap's top goes back); the trim returns them.
    void returnsFreedPagesFromTheMiddleOfTheHeap()
    {
#if !defined(__GLIBC__)
        QSKIP("only glibc's malloc keeps freed pages in the middle of its heaps");
#endif
        constexpr int kBlocks = 4096;
        constexpr size_t kBlockBytes = 16 << 10;  // below malloc's mmap threshold: on the heap
        std::vector<void*> freed, pinned;
        for (int i = 0; i < kBlocks; ++i) {
            freed.push_back(std::malloc(kBlockBytes));
            std::memset(freed.back(), 1, kBlockBytes);  // resident
            pinned.push_back(std::malloc(64));          // keeps the freed neighbours off the top
        }
        const double full = residentMiB();
        for (void* p : freed) std::free(p);
        const double afterFree = residentMiB();
        QVERIFY(releaseFreeHeapMemory());
        const double afterTrim = residentMiB();
        for (void* p : pinned) std::free(p);

        const double blocksMiB = double(kBlocks) * double(kBlockBytes) / (1024.0 * 1024.0);  // 64
        QVERIFY2(full - afterFree < blocksMiB / 4,
                 qPrintable(QString("free() alone returned %1 of %2 MiB").arg(full - afterFree).arg(blocksMiB)));
        QVERIFY2(afterFree - afterTrim > blocksMiB * 3 / 4,
                 qPrintable(QString("the trim returned %1 of %2 MiB").arg(afterFree - afterTrim).arg(blocksMiB)));
    }

    void trimsEveryIntervalUntilDestroyed()
    {
        HeapTrimmer trimmer(std::chrono::milliseconds(10));
        QTRY_VERIFY_WITH_TIMEOUT(trimmer.trims() >= 3, 10000);
    }

    // The destructor wakes the thread instead of waiting out the interval (an hour here).
    void stopsWithoutWaitingForTheInterval()
    {
        QElapsedTimer timer;
        timer.start();
        { HeapTrimmer trimmer(std::chrono::hours(1)); }
        QVERIFY2(timer.elapsed() < 5000, qPrintable(QString("%1 ms").arg(timer.elapsed())));
    }
};

QTEST_GUILESS_MAIN(TestHeapTrimmer)
#include "test_heap_trimmer.moc"
