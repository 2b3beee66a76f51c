// ByteLevelBpe: the byte-level BPE of Hugging Face `tokenizers` (GPT-2's scheme, as Qwen3 and
// Llama 3 use it), read from a tokenizer.json. Gives the ids `tokenizers` gives for the
// configurations it accepts, and refuses the rest with the reason (tokenizer.json field named):
//   - normalizer: none or NFC (utf8proc);
//   - pre_tokenizer: a Split on a regex (behavior "Isolated", not inverted; PCRE2 with Unicode
//     properties) followed by ByteLevel without its own regex or prefix space, or ByteLevel alone
//     with its GPT-2 regex;
//   - model: BPE without dropout, byte fallback, subword prefix or word suffix; merges as
//     "a b" strings or [a, b] pairs; `ignore_merges` (a whole pre-token in the vocabulary is one
//     token: Llama 3);
//   - added tokens (special or not) matched in the raw text, leftmost and then longest, and never
//     normalized; lstrip, rstrip and single_word are refused.
// Text that is not valid UTF-8 is read with each bad sequence as U+FFFD, as a JSON string or a
// JavaScript string would hold it.
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace brook {

class ByteLevelBpe {
public:
    static Result<std::unique_ptr<ByteLevelBpe>> fromTokenizerJson(std::string_view json);
    ~ByteLevelBpe();

    // The ids of `text`, added tokens included where their text appears (special-token text in
    // the input becomes the special token, as `tokenizers`' encode does). Thread-safe.
    std::vector<int32_t> encode(std::string_view text) const;
    // Only ordinary text: added-token strings are encoded as the characters they are.
    void encodeOrdinary(std::string_view text, std::vector<int32_t>& out) const;
    // The bytes the ids stand for (a streamed piece may end inside a UTF-8 character).
    std::string decode(std::span<const int32_t> ids) const;

    int32_t vocabSize() const;  // the largest id + 1
    // The id of a token (vocabulary or added) written as in tokenizer.json, or -1.
    int32_t tokenId(std::string_view token) const;

private:
    ByteLevelBpe();
    static Result<std::unique_ptr<ByteLevelBpe>> load(std::string_view json);
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace brook
