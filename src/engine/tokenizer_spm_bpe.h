// SpmBpeEncoder: a fast encoder for sentencepiece BPE models that gives exactly the ids
// libsentencepiece 0.1.97's Encode gives, for the configurations it accepts (build() returns
// nullptr for the rest, and the caller keeps using sentencepiece):
//   - model_type BPE, no UNUSED pieces, no piece both "reserved" (control/unknown/byte) and
//     ordinary;
//   - identity normalization (empty precompiled_charsmap), remove_extra_whitespaces off, the
//     dummy prefix at the front (treat_whitespace_as_suffix off);
//   - user-defined pieces free of spaces, "▁" and U+FFFD (so matching them in the raw text
//     equals sentencepiece matching them in the normalized text).
// Why it is faster (about 1 us per token in sentencepiece): sentencepiece builds a normalized
// copy, looks merges up by hashing strings, allocates a heap and a SentencePieceText proto with
// a string per piece per call. Here characters map to ids through a flat table, merges are an
// (id, id) -> id hash, and scratch memory is reused from a small bounded pool (scratch_pool.h).
#pragma once

#include "engine/spm_model_info.h"

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace brook {

class SpmBpeEncoder {
public:
    // nullptr when the model is not one this encoder reproduces exactly (reason logged at debug).
    static std::unique_ptr<SpmBpeEncoder> build(const SpmModelInfo& model);
    static std::unique_ptr<SpmBpeEncoder> build(std::string_view serializedModel);  // parses, then as above
    ~SpmBpeEncoder();

    // Appends the ids of text (no special-token splitting: that happens in Tokenizer). Const and
    // thread-safe.
    void encode(std::string_view text, std::vector<int32_t>& out) const;

    // Bytes of scratch memory kept between calls: bounded whatever the number of threads or the
    // length of the texts (test_tokenizer_fast_bpe).
    size_t keptScratchBytes() const;
    static size_t maxKeptScratchBytes();

private:
    SpmBpeEncoder();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// libsentencepiece's own Encode over the same serialized model: the tests' reference.
class SpmReferenceEncoder {
public:
    static std::unique_ptr<SpmReferenceEncoder> load(std::string_view serializedModel);
    ~SpmReferenceEncoder();
    std::vector<int32_t> encode(std::string_view text) const;

private:
    SpmReferenceEncoder();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace brook
