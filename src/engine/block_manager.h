// BlockManager: counts KV-cache memory in fixed-size blocks (nano-vllm's block_manager) and, with
// prefix caching on, remembers what full blocks hold (vLLM V1's KVCacheManager + BlockPool).
// It hands out block ids and reference counts them; the backend owns the memory behind them.
//
// Prefix caching: once a step has computed a sequence's full block, the block is named by its
// chained hash (block_hash.h) and entered in the cache. When its last holder releases it, a cached
// block is not forgotten but joins the evictable pool, least recently used first; a new sequence
// whose leading blocks hash the same takes a reference on them and skips their computation.
// Evictable blocks count as free: allocation takes never-cached free blocks first and evicts the
// least recently used cached block only when no other is left. Only full blocks are shared and a
// sequence always computes its last token itself, so every write lands in a block that sequence
// holds alone; a cached block is never written while anybody shares it.
//
// Invariant checked by tests: once every sequence has been released, numFreeBlocks() ==
// numTotalBlocks() and every reference count is 0. Engine thread only.
#pragma once

#include "engine/sequence.h"

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace brook {

class BlockManager {
public:
    BlockManager(int numBlocks, int blockSize, bool enablePrefixCaching = false);

    // Blocks `seq` must gain to hold `numNewTokens` more computed tokens.
    int blocksNeeded(const Sequence& seq, int numNewTokens) const;
    bool canAllocate(const Sequence& seq, int numNewTokens) const;
    // Appends blocks to seq.blockTable so it can hold numNewTokens more; false if not enough.
    bool allocate(Sequence& seq, int numNewTokens);
    // Drops the sequence's references. A block whose count reaches zero becomes free: a cached
    // one joins the evictable pool (most recently used last), any other is reused first.
    void release(Sequence& seq);

    // The blocks holding the longest cached prefix of seq.tokens: whole blocks only, and never
    // the last token (something must be computed to sample from). Empty when caching is off or
    // seq already holds blocks. Computes seq.blockHashes as far as it looks.
    std::vector<int32_t> findCachedPrefix(Sequence& seq);
    // Takes a reference on each of `prefix` (found by findCachedPrefix just before), makes them
    // the start of seq's (empty) block table with their tokens computed, then allocates for
    // numNewTokens more. False, with nothing changed, when the blocks are not there.
    bool allocateWithPrefix(Sequence& seq, std::span<const int32_t> prefix, int numNewTokens);
    // Enters seq's full blocks whose tokens are all computed into the cache (after a step).
    void cacheFullBlocks(Sequence& seq);

    bool prefixCachingEnabled() const { return m_cachingEnabled; }
    int numFreeBlocks() const { return m_numFree; }  // never-cached and evictable together
    int numTotalBlocks() const { return static_cast<int>(m_refCounts.size()); }
    int numCachedBlocks() const { return static_cast<int>(m_cachedBlocks.size()); }  // held or evictable
    int blockSize() const { return m_blockSize; }
    double usage() const;  // fraction of blocks held by sequences, 0..1 (evictable ones are free)
    int refCount(int32_t block) const { return m_refCounts[block]; }
    bool isCached(int32_t block) const { return m_hasHash[block] != 0; }

private:
    // The free blocks form one doubly linked list through m_next / m_prev, with the sentinel
    // numTotalBlocks(): never-cached blocks at the head, cached ones behind them from least to
    // most recently released. Allocation takes the head.
    int32_t sentinel() const { return static_cast<int32_t>(m_refCounts.size()); }
    void linkAfter(int32_t at, int32_t block);
    void unlink(int32_t block);
    int32_t takeFreeBlock();  // the head; a cached block taken there is evicted
    void evict(int32_t block);
    uint64_t blockHash(Sequence& seq, int index) const;  // extends seq.blockHashes through index
    bool holdsBlock(int32_t block, uint64_t parentHash, std::span<const int32_t> tokens) const;

    int m_blockSize;
    bool m_cachingEnabled;
    std::vector<int> m_refCounts;
    std::vector<int32_t> m_next, m_prev;  // size numBlocks + 1 (the sentinel)
    int m_numFree = 0;

    // Prefix cache: what each cached block holds, and the block per hash.
    std::vector<char> m_hasHash;
    std::vector<uint64_t> m_hash, m_parentHash;
    std::vector<int32_t> m_tokens;  // blockSize per block, compared on a hit
    std::unordered_map<uint64_t, int32_t> m_cachedBlocks;
};

}  // namespace brook
