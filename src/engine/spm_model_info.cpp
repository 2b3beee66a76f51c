// Minimal protobuf walk over sentencepiece's ModelProto: only fields 1 (pieces: text 1, score 2,
// type 3), 2 (trainer_spec: model_type 3, treat_whitespace_as_suffix 24, byte_fallback 35),
// 3 (normalizer_spec: precompiled_charsmap 2, add_dummy_prefix 3, remove_extra_whitespaces 4,
// escape_whitespaces 5) and 5 (denormalizer_spec: sentencepiece builds a denormalizer when its
// precompiled_charsmap is non-empty) are read; every other field is skipped by wire type, so
// newer model files still parse.
#include "engine/spm_model_info.h"

#include <bit>
#include <cstring>
#include <optional>

namespace brook {

namespace {

enum WireType : uint32_t { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

// Reads fields of one message; every getter returns false on truncated or malformed data.
class WireReader {
public:
    explicit WireReader(std::string_view data) : m_data(data) {}

    bool atEnd() const { return m_pos >= m_data.size(); }

    bool readVarint(uint64_t& value)
    {
        value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (m_pos >= m_data.size()) return false;
            const auto byte = static_cast<uint8_t>(m_data[m_pos++]);
            value |= static_cast<uint64_t>(byte & 0x7F) << shift;
            if ((byte & 0x80) == 0) return true;
        }
        return false;
    }

    bool readTag(uint32_t& field, uint32_t& wireType)
    {
        uint64_t tag = 0;
        if (!readVarint(tag)) return false;
        field = static_cast<uint32_t>(tag >> 3);
        wireType = static_cast<uint32_t>(tag & 7);
        return field != 0;
    }

    bool readBytes(std::string_view& out)
    {
        uint64_t length = 0;
        if (!readVarint(length) || length > m_data.size() - m_pos) return false;
        out = m_data.substr(m_pos, static_cast<size_t>(length));
        m_pos += static_cast<size_t>(length);
        return true;
    }

    bool readFixed32(uint32_t& value)
    {
        if (4 > m_data.size() - m_pos) return false;
        std::memcpy(&value, m_data.data() + m_pos, 4);
        m_pos += 4;
        return true;
    }

    bool skip(uint32_t wireType)
    {
        uint64_t ignored = 0;
        std::string_view bytes;
        switch (wireType) {
        case Varint: return readVarint(ignored);
        case Fixed64: return advance(8);
        case LengthDelimited: return readBytes(bytes);
        case Fixed32: return advance(4);
        default: return false;  // groups (3, 4) are not used by sentencepiece
        }
    }

private:
    bool advance(size_t n)
    {
        if (n > m_data.size() - m_pos) return false;
        m_pos += n;
        return true;
    }

    std::string_view m_data;
    size_t m_pos = 0;
};

struct SpmPiece {
    std::string_view text;
    float score = 0;
    SpmPieceType type = SpmPieceType::Normal;  // proto default
};

std::optional<SpmPiece> parsePiece(std::string_view message)
{
    WireReader reader(message);
    SpmPiece piece;
    while (!reader.atEnd()) {
        uint32_t field = 0, wireType = 0;
        if (!reader.readTag(field, wireType)) return std::nullopt;
        if (field == 1 && wireType == LengthDelimited) {
            if (!reader.readBytes(piece.text)) return std::nullopt;
        } else if (field == 2 && wireType == Fixed32) {
            uint32_t bits = 0;
            if (!reader.readFixed32(bits)) return std::nullopt;
            piece.score = std::bit_cast<float>(bits);
        } else if (field == 3 && wireType == Varint) {
            uint64_t value = 0;
            if (!reader.readVarint(value) || value < 1 || value > 6) return std::nullopt;
            piece.type = static_cast<SpmPieceType>(value);
        } else if (!reader.skip(wireType)) {
            return std::nullopt;
        }
    }
    return piece;
}

// Hands every varint field of `message` to onVarint(field, value) and, when `charsmap` is given,
// stores field 2 (a NormalizerSpec's precompiled_charsmap) there; the rest is skipped. False on
// malformed data.
template <typename OnVarint>
bool parseVarints(std::string_view message, OnVarint onVarint, std::string_view* charsmap = nullptr)
{
    WireReader reader(message);
    while (!reader.atEnd()) {
        uint32_t field = 0, wireType = 0;
        if (!reader.readTag(field, wireType)) return false;
        if (wireType == Varint) {
            uint64_t value = 0;
            if (!reader.readVarint(value)) return false;
            onVarint(field, value);
        } else if (charsmap && field == 2 && wireType == LengthDelimited) {
            if (!reader.readBytes(*charsmap)) return false;
        } else if (!reader.skip(wireType)) {
            return false;
        }
    }
    return true;
}

}  // namespace

Result<SpmModelInfo> SpmModelInfo::parse(std::string_view serialized)
{
    SpmModelInfo info;
    WireReader reader(serialized);
    while (!reader.atEnd()) {
        uint32_t field = 0, wireType = 0;
        if (!reader.readTag(field, wireType)) return makeError("malformed protobuf tag at top level");
        if (field == 1 && wireType == LengthDelimited) {
            std::string_view message;
            std::optional<SpmPiece> piece;
            if (!reader.readBytes(message) || !(piece = parsePiece(message)))
                return makeError("malformed piece #" + std::to_string(info.pieceTypes.size()));
            info.pieceTypes.push_back(piece->type);
            info.pieceTexts.emplace_back(piece->text);
            info.pieceScores.push_back(piece->score);
        } else if (field == 2 && wireType == LengthDelimited) {
            std::string_view message;
            const bool ok = reader.readBytes(message) && parseVarints(message, [&](uint32_t f, uint64_t v) {
                                if (f == 3) info.modelType = static_cast<uint32_t>(v);
                                else if (f == 24) info.treatWhitespaceAsSuffix = v != 0;
                                else if (f == 35) info.byteFallback = v != 0;
                            });
            if (!ok) return makeError("malformed trainer_spec");
        } else if (field == 3 && wireType == LengthDelimited) {
            std::string_view message, charsmap;
            const bool ok = reader.readBytes(message) && parseVarints(
                                                             message,
                                                             [&](uint32_t f, uint64_t v) {
                                                                 if (f == 3) info.addDummyPrefix = v != 0;
                                                                 else if (f == 4) info.removeExtraWhitespaces = v != 0;
                                                                 else if (f == 5) info.escapeWhitespaces = v != 0;
                                                             },
                                                             &charsmap);
            if (!ok) return makeError("malformed normalizer_spec");
            info.hasCharsmap = !charsmap.empty();
        } else if (field == 5 && wireType == LengthDelimited) {
            std::string_view message, charsmap;
            if (!reader.readBytes(message) || !parseVarints(
                                                  message, [](uint32_t, uint64_t) {}, &charsmap))
                return makeError("malformed denormalizer_spec");
            info.hasDenormalizer = !charsmap.empty();
        } else if (!reader.skip(wireType)) {
            return makeError("malformed protobuf field " + std::to_string(field));
        }
    }
    if (info.pieceTypes.empty()) return makeError("no pieces");
    return info;
}

}  // namespace brook
