// useServerMalloc: the soak's fix for resident memory that crept up under hundreds of HTTP
// threads (docs/benchmarks.md, "Reliability"). The program re-executes itself once with glibc's
// tunables set, keeps its arguments and the user's own settings, and ends up with at most two
// arenas however many threads allocate.
#include "platform/server_malloc.h"

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

// The child: counts its starts in the environment, sets malloc up, then lets 32 threads allocate
// at once and reports what it sees.
int runChild(char** argv)
{
    const char* starts = std::getenv("BROOK_TEST_STARTS");
    setenv("BROOK_TEST_STARTS", std::to_string((starts ? std::atoi(starts) : 0) + 1).c_str(), 1);
    useServerMalloc(argv);
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
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    const char* saved = std::getenv("BROOK_USER_GLIBC_TUNABLES");
#if defined(__GLIBC__)
    const int arenas = arenaCount();
#else
    const int arenas = 0;
#endif
    std::printf("starts=%s\ntunables=%s\nleftover=%s\narenas=%d\nargs=%s|%s\n",
                std::getenv("BROOK_TEST_STARTS"), tunables ? tunables : "(unset)",
                saved ? "yes" : "no", arenas, argv[2], argv[3]);
    return 0;
}

}  // namespace

class TestServerMalloc : public QObject {
    Q_OBJECT

    QMap<QString, QString> child(const QStringList& env)
    {
        QProcess process;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove(QStringLiteral("GLIBC_TUNABLES"));
        environment.remove(QStringLiteral("MALLOC_ARENA_MAX"));
        for (const QString& pair : env) environment.insert(pair.section('=', 0, 0), pair.section('=', 1));
        process.setProcessEnvironment(environment);
        process.start(QCoreApplication::applicationFilePath(),
                      {QStringLiteral("--server-malloc-child"), QStringLiteral("one"), QStringLiteral("two words")});
        if (!process.waitForFinished(30000) || process.exitCode() != 0) return {};
        QMap<QString, QString> out;
        for (const QString& line : QString::fromUtf8(process.readAllStandardOutput()).split('\n'))
            if (line.contains('=')) out[line.section('=', 0, 0)] = line.section('=', 1);
        return out;
    }

private slots:
    void addsTheSettingsAndKeepsTheUsers()
    {
        qunsetenv("MALLOC_ARENA_MAX");
        QCOMPARE(serverMallocTunables(""), std::string("glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0"));
        QCOMPARE(serverMallocTunables("glibc.malloc.tcache_count=3"),
                 std::string("glibc.malloc.tcache_count=3:glibc.malloc.arena_max=2"));
        QCOMPARE(serverMallocTunables("glibc.mem.tagging=1:glibc.malloc.arena_max=8"),
                 std::string("glibc.mem.tagging=1:glibc.malloc.arena_max=8:glibc.malloc.tcache_count=0"));
        // A key that only starts like one of ours is not ours.
        QCOMPARE(serverMallocTunables("glibc.malloc.arena_max_x=1"),
                 std::string("glibc.malloc.arena_max_x=1:glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0"));
        qputenv("MALLOC_ARENA_MAX", "4");
        QCOMPARE(serverMallocTunables(""), std::string("glibc.malloc.tcache_count=0"));
        qunsetenv("MALLOC_ARENA_MAX");
    }

    void reexecutesOnceWithItsArguments()
    {
#if !defined(__GLIBC__)
        QSKIP("only glibc's malloc has these settings");
#else
        const auto out = child({});
        QCOMPARE(out.value("starts"), QStringLiteral("2"));  // itself, then once re-executed
        // What it starts in turn gets the user's environment back: here, no tunables at all.
        QCOMPARE(out.value("tunables"), QStringLiteral("(unset)"));
        QCOMPARE(out.value("leftover"), QStringLiteral("no"));
        QCOMPARE(out.value("args"), QStringLiteral("one|two words"));
        // Without the setting glibc gives each new thread an arena, up to eight per core.
        QVERIFY2(out.value("arenas").toInt() >= 1 && out.value("arenas").toInt() <= 2, qPrintable(out.value("arenas")));
#endif
    }

    void putsTheUsersTunablesBack()
    {
#if !defined(__GLIBC__)
        QSKIP("only glibc's malloc has these settings");
#else
        const auto out = child({QStringLiteral("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576")});
        QCOMPARE(out.value("starts"), QStringLiteral("2"));
        QCOMPARE(out.value("tunables"), QStringLiteral("glibc.malloc.mmap_threshold=1048576"));
        QCOMPARE(out.value("leftover"), QStringLiteral("no"));
#endif
    }

    void theUsersOwnSettingsNeedNoRestart()
    {
#if !defined(__GLIBC__)
        QSKIP("only glibc's malloc has these settings");
#else
        const auto out = child({QStringLiteral("GLIBC_TUNABLES=glibc.malloc.tcache_count=5:glibc.malloc.arena_max=3")});
        QCOMPARE(out.value("starts"), QStringLiteral("1"));
        QCOMPARE(out.value("tunables"), QStringLiteral("glibc.malloc.tcache_count=5:glibc.malloc.arena_max=3"));
        QVERIFY(out.value("arenas").toInt() <= 3);
#endif
    }
};

int main(int argc, char** argv)
{
    if (argc == 4 && std::string(argv[1]) == "--server-malloc-child") return runChild(argv);
    QCoreApplication app(argc, argv);
    TestServerMalloc test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_server_malloc.moc"
