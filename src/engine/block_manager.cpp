#include "engine/block_manager.h"

#include <cassert>

namespace brook {

BlockManager::BlockManager(int numBlocks, int blockSize) : m_blockSize(blockSize), m_refCounts(numBlocks, 0)
{
    assert(numBlocks >= 0 && blockSize > 0);
    for (int32_t b = 0; b < numBlocks; ++b) m_free.push_back(b);
}

int BlockManager::blocksNeeded(const Sequence& seq, int numNewTokens) const
{
    const int tokens = seq.numComputedTokens + numNewTokens;
    const int needed = (tokens + m_blockSize - 1) / m_blockSize;
    const int have = static_cast<int>(seq.blockTable.size());
    return needed > have ? needed - have : 0;
}

bool BlockManager::canAllocate(const Sequence& seq, int numNewTokens) const
{
    return blocksNeeded(seq, numNewTokens) <= numFreeBlocks();
}

bool BlockManager::allocate(Sequence& seq, int numNewTokens)
{
    int needed = blocksNeeded(seq, numNewTokens);
    if (needed > numFreeBlocks()) return false;
    while (needed-- > 0) {
        const int32_t block = m_free.front();
        m_free.pop_front();
        assert(m_refCounts[block] == 0);
        m_refCounts[block] = 1;
        seq.blockTable.push_back(block);
    }
    return true;
}

void BlockManager::release(Sequence& seq)
{
    // Free in reverse so the most recently used blocks are handed out last.
    for (auto it = seq.blockTable.rbegin(); it != seq.blockTable.rend(); ++it) {
        assert(m_refCounts[*it] > 0);
        if (--m_refCounts[*it] == 0) m_free.push_back(*it);
    }
    seq.blockTable.clear();
}

void BlockManager::share(const Sequence& from, Sequence& to)
{
    assert(to.blockTable.empty());
    for (int32_t block : from.blockTable) {
        assert(m_refCounts[block] > 0);
        ++m_refCounts[block];
        to.blockTable.push_back(block);
    }
}

double BlockManager::usage() const
{
    if (m_refCounts.empty()) return 0.0;
    return 1.0 - double(numFreeBlocks()) / double(numTotalBlocks());
}

}  // namespace brook
