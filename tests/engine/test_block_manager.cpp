// BlockManager: allocation by token count, reference counts, the free count returning to full
// after every release, and prefix caching: chained block hashes, the longest cached prefix in
// whole blocks (never the last token), references taken on hits, and LRU eviction only when
// memory is needed.
#include "engine/block_manager.h"
#include "engine/block_hash.h"

#include <QtTest>

#include <numeric>
#include <random>

using namespace brook;

namespace {
Sequence withTokens(std::vector<int32_t> tokens)
{
    Sequence s;
    s.numPromptTokens = int(tokens.size());
    s.tokens = std::move(tokens);
    return s;
}

std::vector<int32_t> iota(int n, int32_t first = 100)
{
    std::vector<int32_t> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), first);
    return v;
}

// Computes all of seq as one step would, then offers its full blocks to the cache.
void computeAll(BlockManager& blocks, Sequence& seq)
{
    QVERIFY(blocks.allocate(seq, seq.numTokens() - seq.numComputedTokens));
    seq.numComputedTokens = seq.numTokens();
    blocks.cacheFullBlocks(seq);
}
}  // namespace

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

    void blockHashChainsOverParentTokensAndExtraKeys()
    {
        const std::vector<int32_t> a{1, 2, 3, 4}, b{1, 2, 4, 3};
        const uint64_t h = hashBlockTokens(kRootBlockHash, a);
        QCOMPARE(hashBlockTokens(kRootBlockHash, a), h);  // one block, one identity
        QVERIFY(hashBlockTokens(kRootBlockHash, b) != h);
        QVERIFY(hashBlockTokens(h, a) != h);  // the same tokens after another parent
        const std::vector<uint64_t> salt{42};
        QVERIFY(hashBlockTokens(kRootBlockHash, a, salt) != h);
        QVERIFY(hashBlockTokens(kRootBlockHash, std::vector<int32_t>{1, 2, 3}) != h);
    }

    void cachingOffFindsNothing()
    {
        BlockManager blocks(8, 4);
        Sequence a = withTokens(iota(12));
        computeAll(blocks, a);
        QCOMPARE(blocks.numCachedBlocks(), 0);
        blocks.release(a);
        Sequence b = withTokens(iota(12));
        QVERIFY(blocks.findCachedPrefix(b).empty());
    }

    void longestCachedPrefixInWholeBlocksKeepsTheLastToken()
    {
        BlockManager blocks(16, 4, true);
        Sequence a = withTokens(iota(10));  // blocks [100..103] [104..107], 2 tokens over
        computeAll(blocks, a);
        QCOMPARE(blocks.numCachedBlocks(), 2);  // the partial third block is not cached
        QVERIFY(blocks.isCached(a.blockTable[0]) && blocks.isCached(a.blockTable[1]));
        QVERIFY(!blocks.isCached(a.blockTable[2]));

        Sequence longer = withTokens(iota(13));  // shares both full blocks
        QCOMPARE(blocks.findCachedPrefix(longer), (std::vector<int32_t>{a.blockTable[0], a.blockTable[1]}));
        Sequence exact = withTokens(iota(8));  // both blocks, but its last token must be computed
        QCOMPARE(blocks.findCachedPrefix(exact), std::vector<int32_t>{a.blockTable[0]});
        std::vector<int32_t> diverging = iota(12);
        diverging[6] = 7;  // differs inside the second block
        Sequence d = withTokens(diverging);
        QCOMPARE(blocks.findCachedPrefix(d), std::vector<int32_t>{a.blockTable[0]});
        std::vector<int32_t> shifted = iota(12);
        shifted[0] = 7;  // a different first block: the second block's tokens match, its chain does not
        Sequence s = withTokens(shifted);
        QVERIFY(blocks.findCachedPrefix(s).empty());
    }

    void hitTakesReferencesAndReleaseReturnsThem()
    {
        BlockManager blocks(6, 4, true);
        Sequence a = withTokens(iota(9));
        computeAll(blocks, a);  // 3 blocks, 2 cached
        Sequence b = withTokens(iota(11));
        const std::vector<int32_t> prefix = blocks.findCachedPrefix(b);
        QCOMPARE(int(prefix.size()), 2);
        QVERIFY(blocks.allocateWithPrefix(b, prefix, b.numTokens() - 8));
        QCOMPARE(b.numComputedTokens, 8);
        QCOMPARE(b.blockTable[0], a.blockTable[0]);
        QCOMPARE(blocks.refCount(a.blockTable[0]), 2);
        QCOMPARE(blocks.refCount(b.blockTable[2]), 1);  // its own block for the new tokens
        QVERIFY(b.blockTable[2] != a.blockTable[2]);
        QCOMPARE(blocks.numFreeBlocks(), 2);

        blocks.release(a);
        QCOMPARE(blocks.refCount(b.blockTable[0]), 1);
        QCOMPARE(blocks.numFreeBlocks(), 3);  // a's partial block
        blocks.release(b);
        for (int32_t block = 0; block < blocks.numTotalBlocks(); ++block) QCOMPARE(blocks.refCount(block), 0);
        QCOMPARE(blocks.numFreeBlocks(), blocks.numTotalBlocks());
        QCOMPARE(blocks.usage(), 0.0);
        QCOMPARE(blocks.numCachedBlocks(), 2);  // kept, evictable

        // A hit on blocks nobody holds takes them out of the free pool.
        Sequence c = withTokens(iota(9));
        const std::vector<int32_t> again = blocks.findCachedPrefix(c);
        QCOMPARE(int(again.size()), 2);
        QVERIFY(blocks.allocateWithPrefix(c, again, 1));
        QCOMPARE(blocks.numFreeBlocks(), 3);
        blocks.release(c);
    }

    void hitIsRefusedWhenTheRestDoesNotFit()
    {
        BlockManager blocks(4, 4, true);
        Sequence a = withTokens(iota(9));
        computeAll(blocks, a);
        blocks.release(a);  // 2 cached evictable + 2 free
        Sequence b = withTokens(iota(30));
        const std::vector<int32_t> prefix = blocks.findCachedPrefix(b);
        QCOMPARE(int(prefix.size()), 2);
        QVERIFY(!blocks.allocateWithPrefix(b, prefix, 22));  // 8 cached + 22 needs 8 blocks
        QVERIFY(b.blockTable.empty());
        QCOMPARE(b.numComputedTokens, 0);
        QCOMPARE(blocks.numFreeBlocks(), 4);
        QVERIFY(blocks.allocateWithPrefix(b, prefix, 8));  // 16 tokens in 4 blocks: fits exactly
        QCOMPARE(blocks.numFreeBlocks(), 0);
        blocks.release(b);
    }

    void evictsOnlyWhenNeededLeastRecentlyUsedFirst()
    {
        BlockManager blocks(8, 4, true);
        Sequence a = withTokens(iota(16, 100));
        computeAll(blocks, a);  // 4 cached blocks
        const std::vector<int32_t> aBlocks = a.blockTable;
        blocks.release(a);
        Sequence b = withTokens(iota(8, 500));
        computeAll(blocks, b);  // 2 cached blocks, released after a's: more recently used
        blocks.release(b);
        QCOMPARE(blocks.numCachedBlocks(), 6);

        // Two never-cached blocks are free: taking them evicts nothing.
        Sequence c;
        QVERIFY(blocks.allocate(c, 8));
        QCOMPARE(blocks.numCachedBlocks(), 6);
        // Two more must come from the cache: a's (least recently used), its last blocks first.
        QVERIFY(blocks.allocate(c, 16));
        QCOMPARE(blocks.numCachedBlocks(), 4);
        QVERIFY(!blocks.isCached(aBlocks[3]) && !blocks.isCached(aBlocks[2]));
        QVERIFY(blocks.isCached(aBlocks[0]) && blocks.isCached(aBlocks[1]));
        Sequence again = withTokens(iota(16, 100));
        QCOMPARE(blocks.findCachedPrefix(again), (std::vector<int32_t>{aBlocks[0], aBlocks[1]}));
        Sequence bAgain = withTokens(iota(9, 500));
        QCOMPARE(int(blocks.findCachedPrefix(bAgain).size()), 2);
        blocks.release(c);
    }

    void duplicateBlockStaysPrivate()
    {
        // Two sequences computed the same prompt side by side: the first to finish a block names
        // it; the other's copy is freed as an ordinary block.
        BlockManager blocks(8, 4, true);
        Sequence a = withTokens(iota(5)), b = withTokens(iota(5));
        QVERIFY(blocks.allocate(a, 5));
        QVERIFY(blocks.allocate(b, 5));
        a.numComputedTokens = b.numComputedTokens = 5;
        blocks.cacheFullBlocks(a);
        blocks.cacheFullBlocks(b);
        QCOMPARE(blocks.numCachedBlocks(), 1);
        const int32_t named = a.blockTable[0];
        QVERIFY(blocks.isCached(named));
        QVERIFY(!blocks.isCached(b.blockTable[0]));
        blocks.release(b);
        blocks.release(a);
        QCOMPARE(blocks.numFreeBlocks(), 8);
        Sequence c = withTokens(iota(6));
        QCOMPARE(blocks.findCachedPrefix(c), std::vector<int32_t>{named});
    }

    void randomSharedPrefixesKeepCountsExact()
    {
        // Sequences drawn from three prompts' prefixes come and go; every step the reference
        // counts must add up to the block tables, and held + free blocks to the total.
        BlockManager blocks(40, 4, true);
        std::mt19937 rng(3);
        const std::vector<int32_t> bases[3] = {iota(40, 100), iota(40, 300), iota(40, 500)};
        std::vector<Sequence> seqs(12);
        int hits = 0;
        for (int round = 0; round < 2000; ++round) {
            Sequence& s = seqs[rng() % seqs.size()];
            if (!s.blockTable.empty() && rng() % 2 == 0) {
                blocks.release(s);
                s = Sequence{};
            } else if (s.blockTable.empty()) {
                const auto& base = bases[rng() % 3];
                s = withTokens(std::vector<int32_t>(base.begin(), base.begin() + 2 + ptrdiff_t(rng() % 38)));
                const std::vector<int32_t> prefix = blocks.findCachedPrefix(s);
                hits += int(prefix.size());
                if (!blocks.allocateWithPrefix(s, prefix, s.numTokens() - int(prefix.size()) * 4)) continue;
                s.numComputedTokens = s.numTokens();
                blocks.cacheFullBlocks(s);
            }
            std::vector<int> held(size_t(blocks.numTotalBlocks()), 0);
            for (const auto& q : seqs)
                for (int32_t b : q.blockTable) ++held[size_t(b)];
            int distinct = 0;
            for (int32_t b = 0; b < blocks.numTotalBlocks(); ++b) {
                QCOMPARE(blocks.refCount(b), held[size_t(b)]);
                if (held[size_t(b)] > 0) ++distinct;
            }
            QCOMPARE(distinct + blocks.numFreeBlocks(), blocks.numTotalBlocks());
        }
        QVERIFY(hits > 100);
        for (auto& s : seqs) blocks.release(s);
        QCOMPARE(blocks.numFreeBlocks(), blocks.numTotalBlocks());
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
