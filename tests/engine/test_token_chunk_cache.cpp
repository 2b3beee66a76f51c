// TokenChunkCache: hits return the stored ids, the byte budget holds with least recently used
// chunks evicted first, chunks outside the size rule are never stored, and threads that encode
// the same chunks together see the same ids.
#include "engine/token_chunk_cache.h"

#include <QTest>

#include <string>
#include <thread>
#include <vector>

using brook::TokenChunkCache;

namespace {

std::string chunkText(int i, size_t length = 100)
{
    std::string s = "chunk " + std::to_string(i) + ": ";
    while (s.size() < length) s += char('a' + (s.size() * 7 + size_t(i)) % 26);
    return s;
}

std::vector<int32_t> idsOf(int i, int n = 10)
{
    std::vector<int32_t> ids;
    for (int k = 0; k < n; ++k) ids.push_back(i * 1000 + k);
    return ids;
}

}  // namespace

class TestTokenChunkCache : public QObject {
    Q_OBJECT

private slots:
    void hitAppendsTheStoredIds()
    {
        TokenChunkCache cache(1 << 20);
        std::vector<int32_t> out = {7};
        QVERIFY(!cache.lookup(chunkText(1), out));
        QCOMPARE(out, std::vector<int32_t>{7});
        cache.insert(chunkText(1), idsOf(1));
        QVERIFY(cache.lookup(chunkText(1), out));
        std::vector<int32_t> want = {7};
        for (int32_t id : idsOf(1)) want.push_back(id);
        QCOMPARE(out, want);
        QVERIFY(!cache.lookup(chunkText(2), out));  // a different text of the same length
        QCOMPARE(out.size(), want.size());
    }

    void budgetHoldsAndLeastRecentlyUsedGoesFirst()
    {
        const size_t entry = 100 + 10 * sizeof(int32_t);
        TokenChunkCache cache(4 * entry);  // room for exactly four
        for (int i = 0; i < 4; ++i) cache.insert(chunkText(i), idsOf(i));
        QCOMPARE(cache.entries(), size_t(4));
        std::vector<int32_t> out;
        QVERIFY(cache.lookup(chunkText(0), out));  // 0 is now the most recent; 1 the least
        cache.insert(chunkText(4), idsOf(4));
        QCOMPARE(cache.entries(), size_t(4));
        QVERIFY(cache.bytes() <= 4 * entry);
        QVERIFY(!cache.lookup(chunkText(1), out));
        for (int i : {0, 2, 3, 4}) QVERIFY2(cache.lookup(chunkText(i), out), qPrintable(QString::number(i)));
    }

    void sizeRuleKeepsShortAndHugeChunksOut()
    {
        TokenChunkCache cache(4000);
        std::vector<int32_t> out;
        cache.insert(chunkText(1, TokenChunkCache::kMinBytes - 1), idsOf(1));
        QVERIFY(!cache.lookup(chunkText(1, TokenChunkCache::kMinBytes - 1), out));
        cache.insert(chunkText(2, 1001), idsOf(2));  // more than a quarter of the budget
        QVERIFY(!cache.lookup(chunkText(2, 1001), out));
        cache.insert(chunkText(3, 200), idsOf(3, 300));  // a short text with many ids: 1,400 bytes
        QVERIFY(!cache.lookup(chunkText(3, 200), out));
        QCOMPARE(cache.entries(), size_t(0));
        QCOMPARE(cache.bytes(), size_t(0));
    }

    void threadsShareOneCache()
    {
        TokenChunkCache cache(64 * 1024);  // smaller than what the threads insert: evictions run
        std::vector<std::thread> threads;
        std::vector<int> wrong(4, 0);
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&cache, &wrong, t] {
                for (int round = 0; round < 2000; ++round) {
                    const int i = (round * 7 + t) % 300;
                    std::vector<int32_t> out;
                    if (cache.lookup(chunkText(i), out)) {
                        if (out != idsOf(i)) ++wrong[size_t(t)];
                    } else {
                        cache.insert(chunkText(i), idsOf(i));
                    }
                }
            });
        for (std::thread& thread : threads) thread.join();
        QCOMPARE(wrong, std::vector<int>(4, 0));
        QVERIFY(cache.bytes() <= 64 * 1024);
    }
};

QTEST_APPLESS_MAIN(TestTokenChunkCache)
#include "test_token_chunk_cache.moc"
