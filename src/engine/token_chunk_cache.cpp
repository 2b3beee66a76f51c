#include "engine/token_chunk_cache.h"

namespace brook {

TokenChunkCache::TokenChunkCache(size_t byteBudget) : m_budget(byteBudget), m_maxEntryBytes(byteBudget / 4) {}

bool TokenChunkCache::lookup(std::string_view chunk, std::vector<int32_t>& out)
{
    if (!worthCaching(chunk)) return false;
    std::lock_guard lock(m_mutex);
    const auto it = m_index.find(chunk);
    if (it == m_index.end()) return false;
    m_lru.splice(m_lru.begin(), m_lru, it->second);
    const std::vector<int32_t>& ids = it->second->ids;
    out.insert(out.end(), ids.begin(), ids.end());
    return true;
}

void TokenChunkCache::insert(std::string_view chunk, std::span<const int32_t> ids)
{
    if (!worthCaching(chunk)) return;
    Entry entry{std::string(chunk), std::vector<int32_t>(ids.begin(), ids.end())};
    const size_t added = entryBytes(entry);
    if (added > m_maxEntryBytes) return;  // many ids for a short text: still bounded
    std::lock_guard lock(m_mutex);
    if (m_index.count(chunk)) return;  // another thread encoded it first
    while (!m_lru.empty() && m_bytes + added > m_budget) {
        m_bytes -= entryBytes(m_lru.back());
        m_index.erase(m_lru.back().text);
        m_lru.pop_back();
    }
    m_lru.push_front(std::move(entry));
    m_index.emplace(m_lru.front().text, m_lru.begin());  // the view points into the list node's string
    m_bytes += added;
}

size_t TokenChunkCache::bytes() const
{
    std::lock_guard lock(m_mutex);
    return m_bytes;
}

size_t TokenChunkCache::entries() const
{
    std::lock_guard lock(m_mutex);
    return m_lru.size();
}

}  // namespace brook
