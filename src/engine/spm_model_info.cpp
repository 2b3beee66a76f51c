// Minimal protobuf walk over sentencepiece's ModelProto: only fields 1 (pieces: piece type is
// sub-field 3), 3 (normalizer_spec: add_dummy_prefix is sub-field 3) and 5 (denormalizer_spec:
// sentencepiece builds a denormalizer when its precompiled_charsmap, sub-field 2, is non-empty)
// are read; every other field is skipped by wire type, so newer model files still parse.
#include "engine/spm_model_info.h"

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

std::optional<SpmPieceType> parsePieceType(std::string_view message)
{
    WireReader reader(message);
    SpmPieceType type = SpmPieceType::Normal;  // proto default
    while (!reader.atEnd()) {
        uint32_t field = 0, wireType = 0;
        if (!reader.readTag(field, wireType)) return std::nullopt;
        if (field == 3 && wireType == Varint) {
            uint64_t value = 0;
            if (!reader.readVarint(value) || value < 1 || value > 6) return std::nullopt;
            type = static_cast<SpmPieceType>(value);
        } else if (!reader.skip(wireType)) {
            return std::nullopt;
        }
    }
    return type;
}

std::optional<bool> parseAddDummyPrefix(std::string_view message)
{
    WireReader reader(message);
    bool addDummyPrefix = true;  // proto default
    while (!reader.atEnd()) {
        uint32_t field = 0, wireType = 0;
        if (!reader.readTag(field, wireType)) return std::nullopt;
        if (field == 3 && wireType == Varint) {
            uint64_t value = 0;
            if (!reader.readVarint(value)) return std::nullopt;
            addDummyPrefix = value != 0;
        } else if (!reader.skip(wireType)) {
            return std::nullopt;
        }
    }
    return addDummyPrefix;
}

// True when a NormalizerSpec message carries a non-empty precompiled_charsmap.
std::optional<bool> parseHasCharsmap(std::string_view message)
{
    WireReader reader(message);
    bool hasCharsmap = false;
    while (!reader.atEnd()) {
        uint32_t field = 0, wireType = 0;
        if (!reader.readTag(field, wireType)) return std::nullopt;
        if (field == 2 && wireType == LengthDelimited) {
            std::string_view charsmap;
            if (!reader.readBytes(charsmap)) return std::nullopt;
            hasCharsmap = !charsmap.empty();
        } else if (!reader.skip(wireType)) {
            return std::nullopt;
        }
    }
    return hasCharsmap;
}

}  // namespace

Result<SpmModelInfo> SpmModelInfo::parse(std::string_view serialized)
{
    SpmModelInfo info;
    WireReader reader(serialized);
    while (!reader.atEnd()) {
        uint32_t field = 0, wireType = 0;
        if (!reader.readTag(field, wireType)) return makeError("malformed protobuf tag at top level");
        if ((field == 1 || field == 3) && wireType == LengthDelimited) {
            std::string_view message;
            if (!reader.readBytes(message))
                return makeError("truncated " + std::string(field == 1 ? "piece" : "normalizer_spec"));
            if (field == 1) {
                const auto type = parsePieceType(message);
                if (!type) return makeError("malformed piece #" + std::to_string(info.pieceTypes.size()));
                info.pieceTypes.push_back(*type);
            } else {
                const auto flag = parseAddDummyPrefix(message);
                if (!flag) return makeError("malformed normalizer_spec");
                info.addDummyPrefix = *flag;
            }
        } else if (field == 5 && wireType == LengthDelimited) {
            std::string_view message;
            std::optional<bool> charsmap;
            if (!reader.readBytes(message) || !(charsmap = parseHasCharsmap(message)))
                return makeError("malformed denormalizer_spec");
            info.hasDenormalizer = *charsmap;
        } else if (!reader.skip(wireType)) {
            return makeError("malformed protobuf field " + std::to_string(field));
        }
    }
    if (info.pieceTypes.empty()) return makeError("no pieces");
    return info;
}

}  // namespace brook
