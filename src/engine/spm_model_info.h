// SpmModelInfo: the facts about a sentencepiece model that libsentencepiece 0.1.97 does not
// expose (it has no IsUserDefined()): each piece's type, text and score, the model type and the
// trainer and normalizer flags that decide how text is encoded (what SpmBpeEncoder needs), and
// whether a denormalizer rewrites decoded text.
// Read by walking the serialized ModelProto directly (protobuf wire format, no generated code).
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace brook {

// Values of ModelProto.SentencePiece.Type in sentencepiece_model.proto.
enum class SpmPieceType : uint8_t {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

struct SpmModelInfo {
    static constexpr uint32_t kModelTypeBpe = 2;  // TrainerSpec.ModelType BPE (UNIGRAM is 1)

    std::vector<SpmPieceType> pieceTypes;  // indexed by piece id
    std::vector<std::string> pieceTexts;   // indexed by piece id
    std::vector<float> pieceScores;        // indexed by piece id
    uint32_t modelType = 1;                // TrainerSpec.model_type (proto default UNIGRAM)
    bool treatWhitespaceAsSuffix = false;  // TrainerSpec.treat_whitespace_as_suffix
    bool byteFallback = false;             // TrainerSpec.byte_fallback
    bool addDummyPrefix = true;            // NormalizerSpec.add_dummy_prefix (proto default true)
    bool removeExtraWhitespaces = true;    // NormalizerSpec.remove_extra_whitespaces (proto default true)
    bool escapeWhitespaces = true;         // NormalizerSpec.escape_whitespaces (proto default true)
    bool hasCharsmap = false;              // NormalizerSpec.precompiled_charsmap is non-empty
    bool hasDenormalizer = false;          // denormalizer_spec with rules: decoded text is rewritten

    // Parses a serialized ModelProto; the error says which part of the wire data is broken.
    static Result<SpmModelInfo> parse(std::string_view serialized);
};

}  // namespace brook
