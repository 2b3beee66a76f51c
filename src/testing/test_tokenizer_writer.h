// TestTokenizerWriter: the options form of writeTestTokenizer (declared in test_model_writer.h).
// Tests that need a sentencepiece model with different normalizer settings use this one;
// each distinct option set is trained once per process.
#pragma once

#include "engine/result.h"

#include <filesystem>

namespace brook::testing {

struct TestTokenizerOptions {
    int vocabSize = 1200;         // sentencepiece pieces (added tokens come on top)
    bool addDummyPrefix = false;  // true: sentencepiece prepends "▁" to text and strips it when decoding
};

// Thread-safe. Writes tokenizer.model, tokenizer_config.json, special_tokens_map.json and
// added_tokens.json into dir (created if missing).
Result<void> writeTestTokenizer(const std::filesystem::path& dir, const TestTokenizerOptions& options);

}  // namespace brook::testing
