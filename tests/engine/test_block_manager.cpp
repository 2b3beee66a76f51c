// BlockManager: allocation by token count, reference counts, and the free count returning to
// full after every release.
#include "engine/block_manager.h"

#include <QtTest>

#include <random>

using namespace brook;

class TestBlockManager : public QObject {
    Q_OBJECT
private slots:
    void allocatesByTokenCount()
    {
        BlockManager blocks(10, 16);
        Sequence seq;
        QCOMPARE(blocks.blocksNeeded(seq, 1), 1);
        QCOMPARE(blocks.blocksNeeded(seq, 16), 1);
        QCOMPARE(blocks.blocksNeeded(seq, 17), 2);
        QVERIFY(blocks.allocate(seq, 17));
        QCOMPARE(int(seq.blockTable.size()), 2);
        QCOMPARE(blocks.numFreeBlocks(), 8);
        seq.numComputedTokens = 17;
        QCOMPARE(blocks.blocksNeeded(seq, 15), 0);  // fits in the second block
        QCOMPARE(blocks.blocksNeeded(seq, 16), 1);
        blocks.release(seq);
        QVERIFY(seq.blockTable.empty());
        QCOMPARE(blocks.numFreeBlocks(), 10);
    }

    void refusesWhenFull()
    {
        BlockManager blocks(3, 16);
        Sequence a, b;
        QVERIFY(blocks.allocate(a, 40));
        QVERIFY(!blocks.canAllocate(b, 17));
        QVERIFY(!blocks.allocate(b, 17));
        QVERIFY(b.blockTable.empty());
        QCOMPARE(blocks.numFreeBlocks(), 0);
        QCOMPARE(blocks.usage(), 1.0);
    }

    void sharedBlocksFreeOnLastRelease()
    {
        BlockManager blocks(4, 16);
        Sequence a, b;
        QVERIFY(blocks.allocate(a, 32));
        blocks.share(a, b);
        QCOMPARE(blocks.refCount(a.blockTable[0]), 2);
        blocks.release(a);
        QCOMPARE(blocks.numFreeBlocks(), 2);  // b still holds them
        blocks.release(b);
        QCOMPARE(blocks.numFreeBlocks(), 4);
    }

    void randomWorkloadReturnsEveryBlock()
    {
        BlockManager blocks(64, 16);
        std::mt19937 rng(7);
        std::vector<Sequence> seqs(20);
        for (int round = 0; round < 500; ++round) {
            Sequence& s = seqs[rng() % seqs.size()];
            if (rng() % 3 == 0) {
                blocks.release(s);
                s.numComputedTokens = 0;
            } else {
                const int n = 1 + int(rng() % 40);
                if (blocks.allocate(s, n)) s.numComputedTokens += n;
            }
            int held = 0;
            for (const auto& q : seqs) held += int(q.blockTable.size());
            QCOMPARE(held + blocks.numFreeBlocks(), 64);
        }
        for (auto& s : seqs) blocks.release(s);
        QCOMPARE(blocks.numFreeBlocks(), blocks.numTotalBlocks());
    }
};

QTEST_APPLESS_MAIN(TestBlockManager)
#include "test_block_manager.moc"
