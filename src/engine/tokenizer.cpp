// Tokenizer: sentencepiece for ordinary text; special and added tokens are handled here, around
// it, as Hugging Face's slow tokenizer does: split out of the text before sentencepiece runs
// (longest match first), and emitted verbatim between separately decoded runs of pieces.
// Every special id comes from the model folder's files; only the cls/sep *strings* fall back
// to ERNIE's, exactly as the chat template itself does when they are undefined.
#include "engine/tokenizer.h"

#include "engine/regular_file.h"
#include "engine/special_token_trie.h"
#include "engine/spm_model_info.h"
#include "engine/token_chunk_cache.h"
#include "engine/tokenizer_files.h"
#include "engine/tokenizer_spm_bpe.h"

#include <sentencepiece_processor.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace brook {

namespace {

// Bytes in the UTF-8 sequence that starts with lead byte c (1 for stray continuation bytes).
size_t utf8SequenceLength(unsigned char c)
{
    if ((c & 0xE0) == 0xC0) return 2;
    if ((c & 0xF0) == 0xE0) return 3;
    if ((c & 0xF8) == 0xF0) return 4;
    return 1;
}

}  // namespace

struct Tokenizer::Impl {
    sentencepiece::SentencePieceProcessor sp;
    // Exact and ~10x faster than sp.Encode for the BPE models it accepts; null otherwise.
    std::unique_ptr<SpmBpeEncoder> fastBpe;
    int spmSize = 0;
    int vocabSize = 0;
    std::unordered_map<std::string, int32_t> addedByText;  // every added token, any id
    std::unordered_map<int32_t, std::string> addedById;    // added tokens past the pieces
    std::vector<uint8_t> special;                          // [vocabSize] 1: special or added
    SpecialTokenTrie trie;
    // Bytes that start some special string: most positions of a prompt are skipped without a
    // trie lookup.
    std::array<bool, 256> specialFirstByte{};
    std::string cls;
    std::string sep;
    std::optional<int32_t> eosId;
    std::vector<int32_t> stopIds;
    // appendedText() of every piece: surfaces[surfaceStart[id], surfaceStart[id + 1]), valid
    // where surfaceKind[id] != NotContextFree.
    enum SurfaceKind : uint8_t { NotContextFree, StartsNonEmpty, MayStartEmpty };
    std::string surfaces;
    std::vector<uint32_t> surfaceStart;
    std::vector<uint8_t> surfaceKind;
    // A chat prompt repeats its earlier turns on every request: each turn is one chunk between
    // special tokens, so those are looked up instead of encoded (null: off).
    std::unique_ptr<TokenChunkCache> chunkCache;

    void buildSurfaces(const SpmModelInfo& info)
    {
        static constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // "▁"
        surfaceStart.assign(static_cast<size_t>(spmSize) + 1, 0);
        surfaceKind.assign(static_cast<size_t>(spmSize), NotContextFree);
        for (int id = 0; id < spmSize; ++id) {
            surfaceStart[static_cast<size_t>(id)] = static_cast<uint32_t>(surfaces.size());
            if (info.hasDenormalizer || info.pieceTypes[static_cast<size_t>(id)] != SpmPieceType::Normal ||
                special[static_cast<size_t>(id)])
                continue;
            const std::string& piece = sp.IdToPiece(id);
            std::string_view rest = piece;
            while (rest.substr(0, kSpaceSymbol.size()) == kSpaceSymbol) rest.remove_prefix(kSpaceSymbol.size());
            surfaceKind[static_cast<size_t>(id)] = rest.empty() ? MayStartEmpty : StartsNonEmpty;
            for (size_t i = 0; i < piece.size();) {
                if (piece.compare(i, kSpaceSymbol.size(), kSpaceSymbol) == 0) {
                    surfaces += ' ';
                    i += kSpaceSymbol.size();
                } else {
                    surfaces += piece[i++];
                }
            }
        }
        surfaceStart[static_cast<size_t>(spmSize)] = static_cast<uint32_t>(surfaces.size());
    }

    std::optional<int32_t> resolve(std::string_view token) const
    {
        if (const auto it = addedByText.find(std::string(token)); it != addedByText.end()) return it->second;
        const int id = sp.PieceToId(token);
        if (id >= 0 && id < spmSize && sp.IdToPiece(id) == token) return id;
        return std::nullopt;
    }

    void markSpecial(std::string_view token, int32_t id)
    {
        trie.insert(token, id);
        if (!token.empty()) specialFirstByte[static_cast<unsigned char>(token[0])] = true;
        special[static_cast<size_t>(id)] = 1;
    }

    void encodeChunk(std::string_view chunk, std::vector<int32_t>& out) const
    {
        if (chunk.empty() || (chunkCache && chunkCache->lookup(chunk, out))) return;
        const size_t first = out.size();
        if (fastBpe) {
            fastBpe->encode(chunk, out);
        } else {
            std::vector<int> ids;
            if (const auto status = sp.Encode(chunk, &ids); !status.ok()) {
                spdlog::error("tokenizer: sentencepiece failed to encode {} bytes: {}", chunk.size(),
                              status.ToString());
                return;
            }
            out.insert(out.end(), ids.begin(), ids.end());
        }
        if (chunkCache) chunkCache->insert(chunk, std::span<const int32_t>(out).subspan(first));
    }
};

Tokenizer::Tokenizer() : m_impl(std::make_unique<Impl>()) {}
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::load(const std::filesystem::path& modelDir, size_t chunkCacheBytes)
{
    const auto modelPath = modelDir / "tokenizer.model";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(modelPath, ec))
        return makeError("tokenizer: " + modelPath.string() + " not found");
    // Only a regular file, and only up to a size no sentencepiece model reaches (ERNIE's is
    // ~1.6 MB): a FIFO or /dev/zero under this name is an error, not a hang.
    auto read = readRegularFile(modelPath, kMaxJsonFileBytes);
    if (!read) return makeError("tokenizer: " + read.error());
    const std::string serialized = std::move(*read);

    auto info = SpmModelInfo::parse(serialized);
    if (!info)
        return makeError("tokenizer: " + modelPath.string() + " is not a sentencepiece model (" + info.error() + ")");
    std::unique_ptr<Tokenizer> tokenizer(new Tokenizer());
    if (chunkCacheBytes > 0) tokenizer->m_impl->chunkCache = std::make_unique<TokenChunkCache>(chunkCacheBytes);
    Impl& impl = *tokenizer->m_impl;
    if (const auto status = impl.sp.LoadFromSerializedProto(serialized); !status.ok())
        return makeError("tokenizer: " + modelPath.string() + " is not a sentencepiece model (" + status.ToString() +
                         ")");
    impl.spmSize = impl.sp.GetPieceSize();
    if (static_cast<size_t>(impl.spmSize) != info->pieceTypes.size())
        return makeError("tokenizer: " + modelPath.string() + ": piece table is inconsistent");
    impl.fastBpe = SpmBpeEncoder::build(*info);

    auto files = TokenizerFiles::read(modelDir);
    if (!files) return files.failure();

    int32_t maxId = impl.spmSize - 1;
    for (const auto& [content, id] : files->addedTokens) {
        impl.addedByText[content] = id;
        if (id >= impl.spmSize) impl.addedById[id] = content;
        maxId = std::max(maxId, id);
    }
    impl.vocabSize = maxId + 1;
    impl.special.assign(static_cast<size_t>(impl.vocabSize), 0);

    // Pieces sentencepiece itself treats as special.
    for (int id = 0; id < impl.spmSize; ++id) {
        const auto type = info->pieceTypes[static_cast<size_t>(id)];
        if (type == SpmPieceType::Control || type == SpmPieceType::UserDefined || type == SpmPieceType::Unknown)
            impl.markSpecial(impl.sp.IdToPiece(id), id);
    }
    for (const auto& [content, id] : files->addedTokens) impl.markSpecial(content, id);
    auto markNamed = [&](const std::string& token, const std::string& where) {
        if (const auto id = impl.resolve(token)) impl.markSpecial(token, *id);
        else
            spdlog::warn("tokenizer: {} \"{}\" is not in the vocabulary of {}; ignored", where, token,
                         modelPath.string());
    };
    for (const auto& [role, token] : files->namedTokens) markNamed(token, role);
    for (const auto& token : files->additionalSpecialTokens) markNamed(token, "additional special token");

    const auto named = [&](const char* role) -> std::optional<std::string> {
        const auto it = files->namedTokens.find(role);
        return it == files->namedTokens.end() ? std::nullopt : std::optional(it->second);
    };
    impl.cls = named("cls_token").value_or("<|begin_of_sentence|>");
    impl.sep = named("sep_token").value_or("<|end_of_sentence|>");
    if (const auto eos = named("eos_token")) impl.eosId = impl.resolve(*eos);
    else if (impl.sp.eos_id() >= 0) impl.eosId = impl.sp.eos_id();
    if (impl.eosId) impl.stopIds.push_back(*impl.eosId);
    if (const auto sepId = impl.resolve(impl.sep); sepId && sepId != impl.eosId) impl.stopIds.push_back(*sepId);

    impl.buildSurfaces(*info);

    spdlog::info("tokenizer: {} ({} pieces, {} added tokens, dummy prefix {}, stop ids {}, {} encoder)",
                 modelPath.string(), impl.spmSize, files->addedTokens.size(), info->addDummyPrefix ? "on" : "off",
                 impl.stopIds.size(), impl.fastBpe ? "fast BPE" : "sentencepiece");
    return tokenizer;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool parseSpecial) const
{
    const TextSpan whole{0, text.size()};
    return encode(text, parseSpecial ? std::span<const TextSpan>() : std::span<const TextSpan>(&whole, 1));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, std::span<const TextSpan> literal) const
{
    const Impl& impl = *m_impl;
    std::vector<int32_t> ids;
    size_t start = 0;
    size_t pos = 0;
    size_t nextLiteral = 0;  // the first span that does not end at or before pos
    while (pos < text.size()) {
        if (!impl.specialFirstByte[static_cast<unsigned char>(text[pos])]) {
            ++pos;
            continue;
        }
        const auto match = impl.trie.longestMatch(text, pos);
        if (!match) {
            ++pos;
            continue;
        }
        while (nextLiteral < literal.size() && literal[nextLiteral].end <= pos) ++nextLiteral;
        // A special token counts only where it lies wholly outside the literal spans.
        const bool touchesLiteral = nextLiteral < literal.size() && literal[nextLiteral].begin < pos + match->length;
        if (!touchesLiteral) {
            impl.encodeChunk(text.substr(start, pos - start), ids);
            ids.push_back(match->id);
            pos += match->length;
        } else {
            // Plain text that spells a special token must not become it: sentencepiece would
            // match user-defined pieces whole, so cut the text after the token's first
            // character and encode the two sides separately.
            const size_t cut = std::min(pos + utf8SequenceLength(static_cast<unsigned char>(text[pos])), text.size());
            impl.encodeChunk(text.substr(start, cut - start), ids);
            pos = cut;
        }
        start = pos;
    }
    impl.encodeChunk(text.substr(start), ids);
    return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skipSpecial) const
{
    const Impl& impl = *m_impl;
    std::string out;
    std::vector<int> run;  // consecutive ordinary pieces: one sentencepiece decode joins bytes
    auto flushRun = [&] {
        if (run.empty()) return;
        std::string text;
        if (const auto status = impl.sp.Decode(run, &text); !status.ok())
            spdlog::error("tokenizer: sentencepiece failed to decode: {}", status.ToString());
        out += text;
        run.clear();
    };
    for (const int32_t id : ids) {
        if (id < 0 || id >= impl.vocabSize) continue;  // padding rows of the embedding: no text
        if (impl.special[static_cast<size_t>(id)]) {
            if (skipSpecial) continue;  // dropped before grouping, as transformers does
            flushRun();
            out += idToPiece(id);
        } else if (id < impl.spmSize) {
            run.push_back(id);
        }
    }
    flushRun();
    return out;
}

std::optional<std::string_view> Tokenizer::appendedText(int32_t id) const
{
    const Impl& impl = *m_impl;
    if (id < 0 || id >= impl.spmSize || impl.surfaceKind[static_cast<size_t>(id)] == Impl::NotContextFree)
        return std::nullopt;
    const uint32_t begin = impl.surfaceStart[static_cast<size_t>(id)];
    return std::string_view(impl.surfaces).substr(begin, impl.surfaceStart[static_cast<size_t>(id) + 1] - begin);
}

bool Tokenizer::startsNonEmptyText(int32_t id) const
{
    return id >= 0 && id < m_impl->spmSize && m_impl->surfaceKind[static_cast<size_t>(id)] == Impl::StartsNonEmpty;
}

std::string Tokenizer::idToPiece(int32_t id) const
{
    if (id >= 0 && id < m_impl->spmSize) return m_impl->sp.IdToPiece(id);
    const auto it = m_impl->addedById.find(id);
    return it == m_impl->addedById.end() ? std::string() : it->second;
}

std::optional<int32_t> Tokenizer::pieceToId(std::string_view piece) const { return m_impl->resolve(piece); }

bool Tokenizer::isSpecial(int32_t id) const
{
    return id >= 0 && id < m_impl->vocabSize && m_impl->special[static_cast<size_t>(id)] != 0;
}

int Tokenizer::vocabSize() const { return m_impl->vocabSize; }
const std::vector<int32_t>& Tokenizer::stopTokenIds() const { return m_impl->stopIds; }
const std::string& Tokenizer::clsToken() const { return m_impl->cls; }
const std::string& Tokenizer::sepToken() const { return m_impl->sep; }
std::optional<int32_t> Tokenizer::eosTokenId() const { return m_impl->eosId; }

}  // namespace brook
