#include "engine/block_manager.h"

#include "engine/block_hash.h"

#include <algorithm>
#include <cassert>

namespace brook {

BlockManager::BlockManager(int numBlocks, int blockSize, bool enablePrefixCaching)
    : m_blockSize(blockSize), m_cachingEnabled(enablePrefixCaching), m_refCounts(numBlocks, 0),
      m_next(size_t(numBlocks) + 1), m_prev(size_t(numBlocks) + 1), m_hasHash(numBlocks, 0)
{
    assert(numBlocks >= 0 && blockSize > 0);
    const int32_t end = sentinel();
    m_next[end] = m_prev[end] = end;
    for (int32_t b = 0; b < numBlocks; ++b) linkAfter(m_prev[end], b);
    if (m_cachingEnabled) {
        m_hash.assign(size_t(numBlocks), 0);
        m_parentHash.assign(size_t(numBlocks), 0);
        m_tokens.assign(size_t(numBlocks) * size_t(blockSize), 0);
    }
}

void BlockManager::linkAfter(int32_t at, int32_t block)
{
    m_prev[block] = at;
    m_next[block] = m_next[at];
    m_prev[m_next[at]] = block;
    m_next[at] = block;
    ++m_numFree;
}

void BlockManager::unlink(int32_t block)
{
    m_next[m_prev[block]] = m_next[block];
    m_prev[m_next[block]] = m_prev[block];
    --m_numFree;
}

void BlockManager::evict(int32_t block)
{
    auto it = m_cachedBlocks.find(m_hash[block]);
    if (it != m_cachedBlocks.end() && it->second == block) m_cachedBlocks.erase(it);
    m_hasHash[block] = 0;
}

int32_t BlockManager::takeFreeBlock()
{
    const int32_t block = m_next[sentinel()];
    assert(block != sentinel());
    unlink(block);
    assert(m_refCounts[block] == 0);
    if (m_hasHash[block]) evict(block);  // memory is needed: the least recently used cached block goes
    m_refCounts[block] = 1;
    return block;
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
    while (needed-- > 0) seq.blockTable.push_back(takeFreeBlock());
    return true;
}

void BlockManager::release(Sequence& seq)
{
    // In reverse, so a sequence's later blocks are evicted before its earlier ones: the start of
    // a prefix is the part most likely to be asked for again (vLLM does the same).
    const int32_t end = sentinel();
    for (auto it = seq.blockTable.rbegin(); it != seq.blockTable.rend(); ++it) {
        const int32_t block = *it;
        assert(m_refCounts[block] > 0);
        if (--m_refCounts[block] > 0) continue;
        if (m_hasHash[block]) linkAfter(m_prev[end], block);  // evictable, most recently used
        else linkAfter(end, block);                           // nothing to keep: hand it out first
    }
    seq.blockTable.clear();
    seq.numCommittedBlocks = 0;
}

uint64_t BlockManager::blockHash(Sequence& seq, int index) const
{
    assert(size_t(index + 1) * size_t(m_blockSize) <= seq.tokens.size());
    for (int i = int(seq.blockHashes.size()); i <= index; ++i) {
        const uint64_t parent = i == 0 ? kRootBlockHash : seq.blockHashes[size_t(i) - 1];
        const std::span<const int32_t> tokens(seq.tokens.data() + size_t(i) * size_t(m_blockSize), size_t(m_blockSize));
        seq.blockHashes.push_back(hashBlockTokens(parent, tokens));
    }
    return seq.blockHashes[size_t(index)];
}

bool BlockManager::holdsBlock(int32_t block, uint64_t parentHash, std::span<const int32_t> tokens) const
{
    if (!m_hasHash[block] || m_parentHash[block] != parentHash) return false;
    const int32_t* stored = m_tokens.data() + size_t(block) * size_t(m_blockSize);
    return std::equal(tokens.begin(), tokens.end(), stored);
}

std::vector<int32_t> BlockManager::findCachedPrefix(Sequence& seq)
{
    std::vector<int32_t> prefix;
    if (!m_cachingEnabled || !seq.blockTable.empty() || seq.tokens.empty()) return prefix;
    const int maxBlocks = (seq.numTokens() - 1) / m_blockSize;  // the last token is always computed
    for (int i = 0; i < maxBlocks; ++i) {
        const uint64_t hash = blockHash(seq, i);
        auto it = m_cachedBlocks.find(hash);
        if (it == m_cachedBlocks.end()) break;
        // The hash only nominates the block; its stored tokens and parent decide.
        const uint64_t parent = i == 0 ? kRootBlockHash : seq.blockHashes[size_t(i) - 1];
        const std::span<const int32_t> tokens(seq.tokens.data() + size_t(i) * size_t(m_blockSize), size_t(m_blockSize));
        if (!holdsBlock(it->second, parent, tokens)) break;
        prefix.push_back(it->second);
    }
    return prefix;
}

bool BlockManager::allocateWithPrefix(Sequence& seq, std::span<const int32_t> prefix, int numNewTokens)
{
    if (prefix.empty()) return allocate(seq, numNewTokens);
    assert(seq.blockTable.empty() && seq.numComputedTokens == 0);
    // Cached blocks nobody holds sit in the free pool: taking them leaves that much less to allocate.
    const int prefixTokens = int(prefix.size()) * m_blockSize;
    const int total = (prefixTokens + numNewTokens + m_blockSize - 1) / m_blockSize;
    const int fresh = total - int(prefix.size());
    const int evictable =
        int(std::count_if(prefix.begin(), prefix.end(), [&](int32_t b) { return m_refCounts[b] == 0; }));
    if (fresh + evictable > numFreeBlocks()) return false;
    for (int32_t block : prefix) {
        assert(m_hasHash[block]);
        if (m_refCounts[block]++ == 0) unlink(block);
        seq.blockTable.push_back(block);
    }
    seq.numComputedTokens = prefixTokens;
    seq.numCommittedBlocks = int(prefix.size());
    const bool allocated = allocate(seq, numNewTokens);
    assert(allocated);
    (void)allocated;
    return true;
}

void BlockManager::cacheFullBlocks(Sequence& seq)
{
    if (!m_cachingEnabled) return;
    const int full = std::min(seq.numComputedTokens / m_blockSize, int(seq.blockTable.size()));
    for (int i = seq.numCommittedBlocks; i < full; ++i) {
        const uint64_t hash = blockHash(seq, i);
        const int32_t block = seq.blockTable[size_t(i)];
        assert(!m_hasHash[block]);
        // Another sequence computed the same block first: keep that one, this one stays private.
        if (!m_cachedBlocks.emplace(hash, block).second) continue;
        m_hasHash[block] = 1;
        m_hash[block] = hash;
        m_parentHash[block] = i == 0 ? kRootBlockHash : seq.blockHashes[size_t(i) - 1];
        std::copy_n(seq.tokens.begin() + ptrdiff_t(i) * m_blockSize, m_blockSize,
                    m_tokens.begin() + ptrdiff_t(block) * m_blockSize);
    }
    seq.numCommittedBlocks = std::max(seq.numCommittedBlocks, full);
}

double BlockManager::usage() const
{
    if (m_refCounts.empty()) return 0.0;
    return 1.0 - double(numFreeBlocks()) / double(numTotalBlocks());
}

}  // namespace brook
