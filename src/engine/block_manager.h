// BlockManager: counts KV-cache memory in fixed-size blocks (nano-vllm's block_manager).
// It hands out block ids and reference counts them; the backend owns the memory behind them.
// Invariant checked by tests: once every sequence has been released, numFreeBlocks() ==
// numTotalBlocks(). Engine thread only.
#pragma once

#include "engine/sequence.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace brook {

class BlockManager {
public:
    BlockManager(int numBlocks, int blockSize);

    // Blocks `seq` must gain to hold `numNewTokens` more computed tokens.
    int blocksNeeded(const Sequence& seq, int numNewTokens) const;
    bool canAllocate(const Sequence& seq, int numNewTokens) const;
    // Appends blocks to seq.blockTable so it can hold numNewTokens more; false if not enough.
    bool allocate(Sequence& seq, int numNewTokens);
    // Drops the sequence's references; blocks whose count reaches zero return to the free list.
    void release(Sequence& seq);
    // Shares all of `from`'s blocks with `to` (reference counts go up).
    void share(const Sequence& from, Sequence& to);

    int numFreeBlocks() const { return static_cast<int>(m_free.size()); }
    int numTotalBlocks() const { return static_cast<int>(m_refCounts.size()); }
    int blockSize() const { return m_blockSize; }
    double usage() const;  // fraction of blocks in use, 0..1
    int refCount(int32_t block) const { return m_refCounts[block]; }

private:
    int m_blockSize;
    std::vector<int> m_refCounts;
    std::deque<int32_t> m_free;
};

}  // namespace brook
