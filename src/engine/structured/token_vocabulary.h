// TokenVocabulary: what each token id adds to the output, as bytes, sorted so that a walk over
// all tokens shares work between tokens with a common prefix (a byte trie, laid out flat: token i
// shares lcp(i) leading bytes with token i - 1). Built once per model; immutable; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace brook {
class Tokenizer;
}

namespace brook::structured {

class TokenVocabulary {
public:
    struct Entry {
        int32_t id = 0;
        uint32_t offset = 0;  // into bytes()
        uint32_t length = 0;
        uint32_t lcp = 0;  // bytes shared with the previous entry
    };

    // tokenBytes[id]: what the token appends to the text; empty for tokens that never appear in
    // constrained output (special, control, unknown, ids past the tokenizer). firstTokenUnsafe:
    // ids whose text differs when they start the output (sentencepiece drops a leading "▁"
    // there), which the matcher forbids as the first token.
    TokenVocabulary(std::vector<std::string> tokenBytes, std::vector<int32_t> firstTokenUnsafe);
    // From a tokenizer; ids in [tokenizer.vocabSize(), vocabSize) get no bytes.
    static std::shared_ptr<const TokenVocabulary> fromTokenizer(const Tokenizer& tokenizer, int vocabSize);

    int vocabSize() const { return m_vocabSize; }
    int maskWords() const { return (m_vocabSize + 31) / 32; }
    const std::vector<Entry>& sorted() const { return m_sorted; }
    std::string_view bytesOf(const Entry& e) const { return std::string_view(m_bytes).substr(e.offset, e.length); }
    std::string_view tokenBytes(int32_t id) const;
    const std::vector<int32_t>& firstTokenUnsafe() const { return m_firstTokenUnsafe; }

private:
    int m_vocabSize = 0;
    std::string m_bytes;
    std::vector<Entry> m_sorted;
    std::vector<int32_t> m_entryOfId;  // -1: no bytes
    std::vector<int32_t> m_firstTokenUnsafe;
};

}  // namespace brook::structured
