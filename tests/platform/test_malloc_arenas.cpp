// capMallocArenas: the soak's fix for arenas whose peaks add up (docs/benchmarks.md,
// "Reliability"). Many threads that allocate at once end up in at most the cap's arenas.
#include "platform/malloc_arenas.h"

#include <QtTest>

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace brook;

namespace {

#if defined(__GLIBC__)
// malloc_info writes one <heap nr="N"> element per arena.
int arenaCount()
{
    char* text = nullptr;
    size_t size = 0;
    FILE* stream = open_memstream(&text, &size);
    malloc_info(0, stream);
    std::fclose(stream);
    const std::string info(text, size);
    std::free(text);
    int count = 0;
    for (size_t at = info.find("<heap nr="); at != std::string::npos; at = info.find("<heap nr=", at + 1)) ++count;
    return count;
}
#endif

}  // namespace

class TestMallocArenas : public QObject {
    Q_OBJECT

private slots:
    void theUsersOwnSettingWins()
    {
#if !defined(__GLIBC__)
        QSKIP("only glibc's malloc has arenas to cap");
#else
        qputenv("MALLOC_ARENA_MAX", "8");
        QCOMPARE(capMallocArenas(2), 0);
        qunsetenv("MALLOC_ARENA_MAX");
        qputenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=8");
        QCOMPARE(capMallocArenas(2), 0);
        qunsetenv("GLIBC_TUNABLES");
        QCOMPARE(capMallocArenas(0), 0);
#endif
    }

    // Without the cap glibc gives each new thread an arena of its own, up to eight per core.
    void manyThreadsShareTheCappedArenas()
    {
#if !defined(__GLIBC__)
        QSKIP("only glibc's malloc has arenas to cap");
#else
        QCOMPARE(capMallocArenas(kServerMallocArenas), kServerMallocArenas);
        constexpr int kThreads = 32;
        std::barrier start(kThreads);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&start] {
                start.arrive_and_wait();
                std::vector<void*> blocks;
                for (int i = 0; i < 2000; ++i) blocks.push_back(std::malloc(64 + size_t(i % 50) * 32));
                for (void* p : blocks) std::free(p);
            });
        for (auto& thread : threads) thread.join();
        QVERIFY2(arenaCount() <= kServerMallocArenas, qPrintable(QString::number(arenaCount()) + " arenas"));
#endif
    }
};

QTEST_GUILESS_MAIN(TestMallocArenas)
#include "test_malloc_arenas.moc"
