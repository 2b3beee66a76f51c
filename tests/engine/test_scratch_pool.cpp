// ScratchPool: what it keeps between calls is bounded in count and in size, whatever the number
// of threads that borrow at once (the HTTP server's workers: issue 54's soak).
#include "engine/scratch_pool.h"

#include <QtTest>

#include <memory>
#include <vector>

using namespace brook;

namespace {

size_t keptCount(const ScratchPool<std::vector<int>>& pool)
{
    size_t n = 0;
    pool.forEachKept([&](const std::vector<int>&) { ++n; });
    return n;
}

}  // namespace

class TestScratchPool : public QObject {
    Q_OBJECT

private slots:
    void keepsAtMostMaxKept()
    {
        ScratchPool<std::vector<int>> pool(4, [](const std::vector<int>&) { return true; });
        {
            std::vector<ScratchPool<std::vector<int>>::Lease> leases;
            for (int i = 0; i < 64; ++i) leases.push_back(pool.borrow());
            QCOMPARE(keptCount(pool), size_t(0));  // all lent
        }
        QCOMPARE(keptCount(pool), size_t(4));
    }

    void reusesWhatItKept()
    {
        ScratchPool<std::vector<int>> pool(2, [](const std::vector<int>&) { return true; });
        const int* first = nullptr;
        {
            auto lease = pool.borrow();
            lease->assign(100, 7);
            first = lease->data();
        }
        auto again = pool.borrow();
        QCOMPARE(again->data(), first);  // the same object, its capacity with it
        QCOMPARE(again->size(), size_t(100));
    }

    void dropsWhatGrewTooLarge()
    {
        ScratchPool<std::vector<int>> pool(8, [](const std::vector<int>& v) { return v.capacity() <= 1000; });
        {
            auto small = pool.borrow();
            small->resize(10);
            auto large = pool.borrow();
            large->resize(100000);
        }
        QCOMPARE(keptCount(pool), size_t(1));
        pool.forEachKept([](const std::vector<int>& v) { QVERIFY(v.capacity() <= 1000); });
    }
};

QTEST_GUILESS_MAIN(TestScratchPool)
#include "test_scratch_pool.moc"
