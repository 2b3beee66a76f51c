// Tokenizer: ERNIE's sentencepiece model plus the added and special tokens listed in
// added_tokens.json / tokenizer_config.json / special_tokens_map.json.
// Special-token strings in text are split out before sentencepiece runs and mapped whole.
// No BOS is added (the chat template starts with <|begin_of_sentence|>).
// All methods are const and thread-safe after load().
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace brook {

// A byte range [begin, end) of a text to encode.
struct TextSpan {
    size_t begin = 0;
    size_t end = 0;
};

class Tokenizer {
public:
    // The default size of the chunk cache: encode() remembers the ids of recent chunks (text
    // between special tokens, e.g. a chat's earlier turns) and looks them up instead of running
    // sentencepiece again. 8 MB holds ~250 conversations of 4,096 tokens.
    static constexpr size_t kChunkCacheBytes = size_t(8) << 20;

    // Loads tokenizer.model and the JSON files beside it from a model folder. chunkCacheBytes 0
    // turns the chunk cache off (the ids are the same either way).
    static Result<std::unique_ptr<Tokenizer>> load(const std::filesystem::path& modelDir,
                                                   size_t chunkCacheBytes = kChunkCacheBytes);
    ~Tokenizer();

    // parseSpecial: split special/added token strings out of the text (true for chat prompts).
    std::vector<int32_t> encode(std::string_view text, bool parseSpecial = true) const;
    // Special tokens are split out everywhere except inside `literal` (sorted, non-overlapping
    // spans): there a string that spells one is plain text. A rendered chat passes its message
    // contents here, so a user cannot fake a turn; the text between is tokenized as one piece,
    // exactly as a whole-string encode would.
    std::vector<int32_t> encode(std::string_view text, std::span<const TextSpan> literal) const;
    // Decodes without adding or cleaning spaces; skipSpecial drops special and added tokens.
    std::string decode(std::span<const int32_t> ids, bool skipSpecial = false) const;

    // Decoding is concatenative for ordinary pieces: once the decoded text is non-empty, a
    // following ordinary piece adds exactly this text (its "▁" as spaces). nullopt for pieces
    // whose text depends on their neighbours (byte-fallback, special, control, unknown) and for
    // every piece of a model whose denormalizer may rewrite text across pieces.
    std::optional<std::string_view> appendedText(int32_t id) const;
    // For a piece with appendedText: true when a decode that starts with it is non-empty at
    // once (its text without leading "▁" is not empty).
    bool startsNonEmptyText(int32_t id) const;

    std::string idToPiece(int32_t id) const;  // raw piece text ("▁the"), special tokens verbatim
    std::optional<int32_t> pieceToId(std::string_view piece) const;
    bool isSpecial(int32_t id) const;  // control/special or added token
    int vocabSize() const;             // sentencepiece pieces + added tokens

    // Ids that end generation: eos (</s>) and the sep token (<|end_of_sentence|>), when present.
    const std::vector<int32_t>& stopTokenIds() const;
    const std::string& clsToken() const;  // "<|begin_of_sentence|>"
    const std::string& sepToken() const;  // "<|end_of_sentence|>"
    std::optional<int32_t> eosTokenId() const;

private:
    Tokenizer();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace brook
