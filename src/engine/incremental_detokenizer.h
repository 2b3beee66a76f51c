// IncrementalDetokenizer: turns a stream of token ids into text deltas that never end in half
// a UTF-8 character and whose concatenation equals decoding all tokens at once
// (vLLM's prefix/read-offset method). The common case, an ordinary piece after text that is
// already out, is a table lookup (Tokenizer::appendedText) with the same result as the two
// decodes. One per sequence; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace brook {

class Tokenizer;

class IncrementalDetokenizer {
public:
    IncrementalDetokenizer(const Tokenizer& tokenizer, bool skipSpecial);

    // Appends one token; returns the new complete text (possibly empty).
    std::string push(int32_t tokenId);
    // Returns whatever is still held back (an incomplete UTF-8 tail at the end of generation).
    std::string flush();
    const std::string& text() const { return m_text; }  // all text emitted so far
    // Pushes answered from the tokenizer's piece table instead of two sentencepiece decodes.
    size_t directAppends() const { return m_directAppends; }

private:
    bool decodesToNothing(int32_t tokenId) const;
    bool appendsDirectly(std::string_view& delta) const;  // for the piece just pushed
    std::string emit(std::string delta);

    const Tokenizer& m_tokenizer;
    bool m_skipSpecial;
    std::vector<int32_t> m_tokens;
    size_t m_prefixOffset = 0;
    size_t m_readOffset = 0;
    std::string m_text;
    size_t m_directAppends = 0;
};

}  // namespace brook
