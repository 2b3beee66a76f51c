// TokenChunkCache: the ids of recently encoded text chunks (the text between two special tokens),
// so that a chat's earlier turns, which every new request repeats verbatim, are not run through
// sentencepiece again. A chunk's ids depend on its text alone (special tokens are split out before
// a chunk is encoded), so a hit returns exactly what encoding would.
//
// Bounded: at most `byteBudget` bytes of keys and ids, least recently used chunks evicted first;
// chunks shorter than kMinBytes (cheaper to encode than to look up) or larger than a quarter of
// the budget (one would flush the rest) are never stored. Thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace brook {

class TokenChunkCache {
public:
    static constexpr size_t kMinBytes = 64;

    explicit TokenChunkCache(size_t byteBudget);

    // Appends the chunk's ids to `out` and returns true when it is cached.
    bool lookup(std::string_view chunk, std::vector<int32_t>& out);
    // Remembers the chunk's ids (no-op for chunks outside the size rule above).
    void insert(std::string_view chunk, std::span<const int32_t> ids);

    size_t bytes() const;
    size_t entries() const;
    bool worthCaching(std::string_view chunk) const
    {
        return chunk.size() >= kMinBytes && chunk.size() <= m_maxEntryBytes;
    }

private:
    struct Entry {
        std::string text;
        std::vector<int32_t> ids;
    };
    using Lru = std::list<Entry>;  // most recently used first

    static size_t entryBytes(const Entry& e) { return e.text.size() + e.ids.size() * sizeof(int32_t); }

    const size_t m_budget;
    const size_t m_maxEntryBytes;
    mutable std::mutex m_mutex;
    Lru m_lru;
    std::unordered_map<std::string_view, Lru::iterator> m_index;  // keys view Entry::text
    size_t m_bytes = 0;
};

}  // namespace brook
