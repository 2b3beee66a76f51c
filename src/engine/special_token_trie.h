// SpecialTokenTrie: finds the longest special-token string starting at a position in text,
// so "<|LOC_10|>" wins over "<|LOC_1|>". A byte trie keeps the scan linear in the text length
// even with ERNIE's ~1,030 special strings. Immutable after construction; thread-safe to read.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace brook {

class SpecialTokenTrie {
public:
    struct Match {
        size_t length = 0;  // bytes of text covered
        int32_t id = -1;
    };

    // Adds a string; an empty string is ignored, a repeated one takes the latest id.
    void insert(std::string_view token, int32_t id);
    std::optional<Match> longestMatch(std::string_view text, size_t pos) const;
    bool empty() const { return m_nodes.size() <= 1; }

private:
    struct Node {
        std::vector<std::pair<unsigned char, uint32_t>> children;  // byte -> node index
        int32_t id = -1;                                           // >= 0: a token ends here
    };

    std::optional<uint32_t> child(uint32_t node, unsigned char byte) const;

    std::vector<Node> m_nodes{Node{}};  // node 0 is the root
};

}  // namespace brook
