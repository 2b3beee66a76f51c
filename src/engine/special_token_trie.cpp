// SpecialTokenTrie: byte trie with linear child lists (special strings share long prefixes
// such as "<|LOC_", so nodes have few children and a map would only add allocations).
#include "engine/special_token_trie.h"

namespace brook {

std::optional<uint32_t> SpecialTokenTrie::child(uint32_t node, unsigned char byte) const
{
    for (const auto& [key, index] : m_nodes[node].children) {
        if (key == byte) return index;
    }
    return std::nullopt;
}

void SpecialTokenTrie::insert(std::string_view token, int32_t id)
{
    if (token.empty()) return;
    uint32_t node = 0;
    for (const char c : token) {
        const auto byte = static_cast<unsigned char>(c);
        if (const auto next = child(node, byte)) {
            node = *next;
        } else {
            const auto index = static_cast<uint32_t>(m_nodes.size());
            m_nodes[node].children.emplace_back(byte, index);
            m_nodes.emplace_back();
            node = index;
        }
    }
    m_nodes[node].id = id;
}

std::optional<SpecialTokenTrie::Match> SpecialTokenTrie::longestMatch(std::string_view text, size_t pos) const
{
    std::optional<Match> best;
    uint32_t node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
        const auto next = child(node, static_cast<unsigned char>(text[i]));
        if (!next) break;
        node = *next;
        if (m_nodes[node].id >= 0) best = Match{i + 1 - pos, m_nodes[node].id};
    }
    return best;
}

}  // namespace brook
