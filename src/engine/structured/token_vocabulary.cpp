#include "engine/structured/token_vocabulary.h"

#include "engine/tokenizer.h"

#include <algorithm>
#include <numeric>

namespace brook::structured {

namespace {

// "<0x41>" -> 0x41: sentencepiece's byte-fallback pieces.
int byteFallback(std::string_view piece)
{
    if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
    int value = 0;
    for (char h : piece.substr(3, 2)) {
        if (!std::isxdigit(uint8_t(h))) return -1;
        value = value * 16 + (std::isdigit(uint8_t(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
    }
    return value;
}

}  // namespace

TokenVocabulary::TokenVocabulary(std::vector<std::string> tokenBytes, std::vector<int32_t> firstTokenUnsafe)
    : m_vocabSize(int(tokenBytes.size())), m_entryOfId(tokenBytes.size(), -1),
      m_firstTokenUnsafe(std::move(firstTokenUnsafe))
{
    std::vector<int32_t> ids;
    for (size_t id = 0; id < tokenBytes.size(); ++id)
        if (!tokenBytes[id].empty()) ids.push_back(int32_t(id));
    std::sort(ids.begin(), ids.end(),
              [&](int32_t a, int32_t b) { return tokenBytes[size_t(a)] < tokenBytes[size_t(b)]; });
    std::string_view previous;
    for (int32_t id : ids) {
        const std::string& text = tokenBytes[size_t(id)];
        Entry e;
        e.id = id;
        e.offset = uint32_t(m_bytes.size());
        e.length = uint32_t(text.size());
        const auto mismatch = std::mismatch(previous.begin(), previous.end(), text.begin(), text.end());
        e.lcp = uint32_t(mismatch.first - previous.begin());
        m_entryOfId[size_t(id)] = int32_t(m_sorted.size());
        m_sorted.push_back(e);
        m_bytes += text;
        previous = text;
    }
}

std::string_view TokenVocabulary::tokenBytes(int32_t id) const
{
    if (id < 0 || id >= m_vocabSize || m_entryOfId[size_t(id)] < 0) return {};
    return bytesOf(m_sorted[size_t(m_entryOfId[size_t(id)])]);
}

std::shared_ptr<const TokenVocabulary> TokenVocabulary::fromTokenizer(const Tokenizer& tokenizer, int vocabSize)
{
    std::vector<std::string> bytes(size_t(std::max(vocabSize, 0)));
    std::vector<int32_t> unsafe;
    const int known = std::min(vocabSize, tokenizer.vocabSize());
    for (int32_t id = 0; id < known; ++id) {
        if (tokenizer.isSpecial(id)) continue;
        const std::string piece = tokenizer.idToPiece(id);
        if (const int b = byteFallback(piece); b >= 0) {
            bytes[size_t(id)] = std::string(1, char(b));
            continue;
        }
        // Pieces whose text depends on their neighbours (unknown, or every piece of a model whose
        // denormalizer rewrites across pieces) are left out: the grammar could not know their bytes.
        const auto appended = tokenizer.appendedText(id);
        if (!appended) continue;
        std::string text(*appended);
        if (text.empty()) continue;
        const int32_t one[] = {id};
        if (tokenizer.decode(one) != text) unsafe.push_back(id);
        bytes[size_t(id)] = std::move(text);
    }
    return std::make_shared<TokenVocabulary>(std::move(bytes), std::move(unsafe));
}

}  // namespace brook::structured
