// IncrementalDetokenizer: vLLM's prefix/read-offset scheme. Each push decodes two windows that
// start at the same token (prefix offset): up to the read offset (text already emitted) and up
// to the end. The delta is the second minus the first. Starting both windows at the same token
// makes window-start effects cancel out (sentencepiece dropping a leading "▁", a byte run cut
// short), so the deltas add up to decoding everything at once.
#include "engine/incremental_detokenizer.h"

#include "engine/tokenizer.h"

#include <span>

namespace brook {

namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

// True when the text ends inside a character: sentencepiece turns the bytes of an unfinished
// character into U+FFFD, and a raw truncated UTF-8 sequence is caught too.
bool endsMidCharacter(std::string_view text)
{
    if (text.size() >= kReplacementChar.size() &&
        text.compare(text.size() - kReplacementChar.size(), kReplacementChar.size(), kReplacementChar) == 0)
        return true;
    // Walk back over continuation bytes to the lead byte of the last sequence.
    size_t continuation = 0;
    size_t i = text.size();
    while (i > 0 && continuation < 4 && (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80) {
        --i;
        ++continuation;
    }
    if (i == 0) return continuation > 0;
    const auto lead = static_cast<unsigned char>(text[i - 1]);
    size_t expected = 0;
    if ((lead & 0x80) == 0) expected = 0;
    else if ((lead & 0xE0) == 0xC0) expected = 1;
    else if ((lead & 0xF0) == 0xE0) expected = 2;
    else if ((lead & 0xF8) == 0xF0) expected = 3;
    else return false;  // invalid lead byte: complete garbage, not an unfinished character
    return continuation < expected;
}

}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, bool skipSpecial)
    : m_tokenizer(tokenizer), m_skipSpecial(skipSpecial)
{}

// Tokenizer::decode skips these ids without ending a run of pieces: out of the vocabulary
// (padding rows of the embedding), and special tokens when they are skipped.
bool IncrementalDetokenizer::decodesToNothing(int32_t tokenId) const
{
    return tokenId < 0 || tokenId >= m_tokenizer.vocabSize() || (m_skipSpecial && m_tokenizer.isSpecial(tokenId));
}

// The two decodes below give exactly the new (last) piece's appendedText when: every id after
// the read offset before it decodes to nothing, the window [prefix, read) holds only
// context-free pieces (and ids that decode to nothing) and its first visible piece decodes to
// non-empty text (so sentencepiece strips no leading "▁" from what follows), and the new piece
// is context free with whole, non-empty text. A window of one ordinary piece is the steady
// state of plain text, so most pushes take this path.
bool IncrementalDetokenizer::appendsDirectly(std::string_view& delta) const
{
    for (size_t i = m_readOffset; i + 1 < m_tokens.size(); ++i)
        if (!decodesToNothing(m_tokens[i])) return false;
    bool seenVisible = false;
    for (size_t i = m_prefixOffset; i < m_readOffset; ++i) {
        const int32_t id = m_tokens[i];
        if (decodesToNothing(id)) continue;
        if (seenVisible ? !m_tokenizer.appendedText(id) : !m_tokenizer.startsNonEmptyText(id)) return false;
        seenVisible = true;
    }
    if (!seenVisible) return false;
    const auto text = m_tokenizer.appendedText(m_tokens.back());
    if (!text || text->empty() || endsMidCharacter(*text)) return false;
    delta = *text;
    return true;
}

std::string IncrementalDetokenizer::push(int32_t tokenId)
{
    m_tokens.push_back(tokenId);
    // Nothing new can be visible, so the two decodes would hold back with the offsets unchanged.
    if (decodesToNothing(tokenId)) return {};
    if (std::string_view direct; appendsDirectly(direct)) {
        ++m_directAppends;
        return emit(std::string(direct));
    }
    const std::span<const int32_t> all(m_tokens);
    const std::string prefixText =
        m_tokenizer.decode(all.subspan(m_prefixOffset, m_readOffset - m_prefixOffset), m_skipSpecial);
    const std::string newText = m_tokenizer.decode(all.subspan(m_prefixOffset), m_skipSpecial);
    // Hold back when nothing new is visible yet or the text stops inside a character.
    if (newText.size() <= prefixText.size() || endsMidCharacter(newText)) return {};
    return emit(newText.substr(prefixText.size()));
}

// Text up to the end is out: the next window starts where this one was read.
std::string IncrementalDetokenizer::emit(std::string delta)
{
    m_prefixOffset = m_readOffset;
    m_readOffset = m_tokens.size();
    m_text += delta;
    return delta;
}

std::string IncrementalDetokenizer::flush()
{
    const std::span<const int32_t> all(m_tokens);
    const std::string prefixText =
        m_tokenizer.decode(all.subspan(m_prefixOffset, m_readOffset - m_prefixOffset), m_skipSpecial);
    const std::string newText = m_tokenizer.decode(all.subspan(m_prefixOffset), m_skipSpecial);
    std::string delta = newText.size() > prefixText.size() ? newText.substr(prefixText.size()) : std::string();
    m_prefixOffset = m_tokens.size();
    m_readOffset = m_tokens.size();
    m_text += delta;
    return delta;
}

}  // namespace brook
