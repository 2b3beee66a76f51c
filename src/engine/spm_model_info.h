// SpmModelInfo: the few facts about a sentencepiece model that libsentencepiece 0.1.97 does not
// expose (it has no IsUserDefined()): each piece's type, the normalizer's dummy-prefix flag and
// whether a denormalizer rewrites decoded text.
// Read by walking the serialized ModelProto directly (protobuf wire format, no generated code).
#pragma once

#include "engine/result.h"

#include <cstdint>
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
    std::vector<SpmPieceType> pieceTypes;  // indexed by piece id
    bool addDummyPrefix = true;            // NormalizerSpec.add_dummy_prefix (proto default true)
    bool hasDenormalizer = false;          // denormalizer_spec with rules: decoded text is rewritten

    // Parses a serialized ModelProto; the error says which part of the wire data is broken.
    static Result<SpmModelInfo> parse(std::string_view serialized);
};

}  // namespace brook
