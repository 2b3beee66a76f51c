// TestModelWriter: writes a model folder with ERNIE-4.5's layout for tests and benchmarks:
// config.json, generation_config.json, tokenizer files and model.safetensors with random
// weights of any shape (including the full 0.3B shape). Weights are scaled so logits are
// neither flat nor saturated. Never used by the engine itself.
#pragma once

#include "engine/model_config.h"
#include "engine/result.h"
#include "engine/tensor_view.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace brook::testing {

struct TestModelShape {
    int vocabSize = 0;  // 0: the trained tokenizer's size (pieces + added tokens), rounded up to 64
    int hiddenSize = 64;
    int intermediateSize = 192;
    int numLayers = 2;
    int numHeads = 4;
    int numKvHeads = 2;
    int headDim = 16;
    int maxPositionEmbeddings = 4096;
    double ropeTheta = 500000.0;

    static TestModelShape tiny();      // the shape above: fast unit tests
    static TestModelShape ernie03b();  // ERNIE-4.5-0.3B: 1024/3072/18/16/2/128, vocab 103424
};

struct TestModelOptions {
    TestModelShape shape;
    DType dtype = DType::BF16;
    uint64_t seed = 1234;
    bool writeLmHead = false;       // tied checkpoints normally omit lm_head.weight; when written
                                    // with tied embeddings it is a copy of the embedding
    bool tieWordEmbeddings = true;  // false: config says untied and lm_head.weight is its own tensor
    int tokenizerVocabSize = 1200;  // sentencepiece pieces trained (added tokens come on top)
    bool shardWeights = false;      // two shards + model.safetensors.index.json
};

// Writes the whole folder; the tokenizer is trained once per process and cached.
Result<void> writeTestModel(const std::filesystem::path& dir, const TestModelOptions& options);

// Trains a sentencepiece model on share/brook/test-corpus (English and Chinese, identity
// normalization, byte fallback) carrying ERNIE's special tokens as pieces and its added tokens
// numbered after the pieces (as ERNIE's own files do), and writes
// tokenizer.model, tokenizer_config.json, special_tokens_map.json and added_tokens.json.
Result<void> writeTestTokenizer(const std::filesystem::path& dir, int vocabSize);

}  // namespace brook::testing
