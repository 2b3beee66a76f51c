// SpmBpeEncoder: sentencepiece's BPE encode (normalize, split into characters, merge the
// best-scoring adjacent pair until none is a piece, byte-fall-back the unknowns), redone over
// integer symbol ids so that one call allocates nothing once its thread's scratch has grown.
// The merge order is sentencepiece's: highest score first, leftmost on ties; the result of BPE
// depends only on that order, so the ids come out identical.
#include "engine/tokenizer_spm_bpe.h"

#include "engine/scratch_pool.h"

#include <sentencepiece_processor.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

namespace brook {

namespace {

constexpr uint32_t kSpaceSymbol = 0x2581;  // "▁"
constexpr uint32_t kReplacement = 0xFFFD;

// Decodes one character the way sentencepiece's normalizer does (util.cc DecodeUTF8 plus
// IsValidDecodeUTF8): overlong forms, surrogates and values past U+10FFFF are invalid, and an
// invalid byte becomes U+FFFD consuming that one byte.
inline uint32_t decodeChar(const unsigned char* p, size_t avail, size_t& len)
{
    const unsigned char b0 = p[0];
    if (b0 < 0x80) {
        len = 1;
        return b0;
    }
    auto trail = [](unsigned char c) { return (c & 0xC0) == 0x80; };
    if ((b0 & 0xE0) == 0xC0) {
        if (avail >= 2 && trail(p[1])) {
            const uint32_t cp = ((b0 & 0x1Fu) << 6) | (p[1] & 0x3Fu);
            if (cp >= 0x80) {
                len = 2;
                return cp;
            }
        }
    } else if ((b0 & 0xF0) == 0xE0) {
        if (avail >= 3 && trail(p[1]) && trail(p[2])) {
            const uint32_t cp = ((b0 & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
            if (cp >= 0x800 && (cp < 0xD800 || cp >= 0xE000)) {
                len = 3;
                return cp;
            }
        }
    } else if ((b0 & 0xF8) == 0xF0) {
        if (avail >= 4 && trail(p[1]) && trail(p[2]) && trail(p[3])) {
            const uint32_t cp = ((b0 & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
            if (cp >= 0x10000 && cp <= 0x10FFFF) {
                len = 4;
                return cp;
            }
        }
    }
    len = 1;
    return kReplacement;
}

// Whole text decodes to exactly one character, valid by decodeChar's rules.
std::optional<uint32_t> singleChar(std::string_view s)
{
    if (s.empty()) return std::nullopt;
    size_t len = 0;
    const uint32_t cp = decodeChar(reinterpret_cast<const unsigned char*>(s.data()), s.size(), len);
    if (len != s.size()) return std::nullopt;
    if (cp == kReplacement && len != 3) return std::nullopt;
    return cp;
}

bool validUtf8(std::string_view s)
{
    for (size_t i = 0; i < s.size();) {
        size_t len = 0;
        const uint32_t cp = decodeChar(reinterpret_cast<const unsigned char*>(s.data() + i), s.size() - i, len);
        if (cp == kReplacement && len != 3) return false;
        i += len;
    }
    return true;
}

size_t appendUtf8(uint32_t cp, unsigned char* out)
{
    if (cp < 0x80) {
        out[0] = static_cast<unsigned char>(cp);
        return 1;
    }
    if (cp < 0x800) {
        out[0] = static_cast<unsigned char>(0xC0 | (cp >> 6));
        out[1] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = static_cast<unsigned char>(0xE0 | (cp >> 12));
        out[1] = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
        out[2] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = static_cast<unsigned char>(0xF0 | (cp >> 18));
    out[1] = static_cast<unsigned char>(0x80 | ((cp >> 12) & 0x3F));
    out[2] = static_cast<unsigned char>(0x80 | ((cp >> 6) & 0x3F));
    out[3] = static_cast<unsigned char>(0x80 | (cp & 0x3F));
    return 4;
}

// Open-addressing hash, linear probing, power-of-two capacity, at most half full, key and value
// side by side: a lookup is one multiply and usually one cache line, where std::unordered_map
// chases a node pointer (at ERNIE's size the merge table is megabytes, so misses dominate).
template <typename Key, typename Value>
class FlatMap {
public:
    static constexpr Key kEmpty = static_cast<Key>(~Key{0});

    void reserve(size_t n)
    {
        size_t cap = 16;
        while (cap < n * 2) cap <<= 1;
        m_entries.assign(cap, Entry{kEmpty, Value{}});
        m_mask = cap - 1;
        m_shift = 64 - std::countr_zero(cap);
        m_size = 0;
    }

    // Inserts or overwrites.
    void put(Key key, const Value& value)
    {
        if ((m_size + 1) * 2 > m_entries.size()) grow();
        size_t i = slot(key);
        while (m_entries[i].key != kEmpty && m_entries[i].key != key) i = (i + 1) & m_mask;
        if (m_entries[i].key == kEmpty) ++m_size;
        m_entries[i] = Entry{key, value};
    }

    const Value* find(Key key) const
    {
        for (size_t i = slot(key);; i = (i + 1) & m_mask) {
            if (m_entries[i].key == key) return &m_entries[i].value;
            if (m_entries[i].key == kEmpty) return nullptr;
        }
    }

private:
    struct Entry {
        Key key;
        Value value;
    };

    size_t slot(Key key) const
    {
        return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> m_shift) & m_mask;
    }

    void grow()
    {
        auto entries = std::move(m_entries);
        reserve(std::max<size_t>(entries.size(), 16));
        for (const Entry& e : entries)
            if (e.key != kEmpty) put(e.key, e.value);
    }

    std::vector<Entry> m_entries;
    size_t m_mask = 0;
    int m_shift = 64;
    size_t m_size = 0;
};

struct Merge {
    int32_t merged = -1;  // piece id of the concatenation
    float score = 0;
};

// A symbol of the text being merged. `sym` is what merges look up: a piece id, a "virtual" id
// (>= piece count) for a character that is not a piece but occurs inside one, or -1 (frozen
// user-defined symbols, and characters in no piece: neither can ever merge).
struct Symbol {
    int32_t sym;
    int32_t out;  // id emitted if the symbol survives as is (the unknown id for unknown chars)
    int32_t prev;
    int32_t next;
    uint32_t cp;  // the normalized character, for byte fallback of an unknown one
    bool alive;
};

struct Candidate {
    float score;
    int32_t left;
    int32_t right;
    int32_t symLeft;
    int32_t symRight;
    int32_t merged;
};

// sentencepiece's agenda order: higher score first, then the leftmost pair. A function object,
// not a function pointer, so that the heap operations inline it.
struct LowerPriority {
    bool operator()(const Candidate& a, const Candidate& b) const
    {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

struct Scratch {
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap;
};

// Scratch kept between calls: as many as encode at once, up to 16, each for texts up to 4,096
// characters (about 160 KiB of symbols and agenda). A longer text's scratch is freed after it.
constexpr size_t kKeptScratch = 16;
constexpr size_t kKeptScratchSymbols = 4096;

bool worthKeeping(const Scratch& s)
{
    return s.symbols.capacity() <= kKeptScratchSymbols && s.heap.capacity() <= kKeptScratchSymbols;
}

}  // namespace

struct SpmBpeEncoder::Impl {
    int32_t pieceCount = 0;
    int32_t unkId = 0;
    bool byteFallback = false;
    bool addDummyPrefix = false;
    bool escapeWhitespaces = true;
    // No ordinary piece holds a non-space character followed by the (normalized) space, so no
    // merge ever crosses the start of a space run and words can be merged one at a time.
    bool splitBeforeSpace = false;
    std::array<int32_t, 256> byteIds{};
    struct CharIds {
        int32_t sym = -1;
        int32_t out = -1;
    };
    std::array<CharIds, 128> ascii{};
    FlatMap<uint32_t, CharIds> chars;  // non-ASCII code points
    FlatMap<uint64_t, Merge> merges;   // (left sym << 32 | right sym) -> merge
    // User-defined pieces, matched longest first at each character (sentencepiece freezes them).
    std::array<bool, 256> userFirstByte{};
    std::vector<std::pair<std::string, int32_t>> userDefined;
    mutable ScratchPool<Scratch> scratch{kKeptScratch, worthKeeping};

    CharIds charIds(uint32_t cp) const
    {
        if (cp < 128) return ascii[cp];
        if (const CharIds* c = chars.find(cp)) return *c;
        return CharIds{-1, unkId};
    }

    // Longest user-defined piece at text[pos..]; 0 when none.
    size_t matchUserDefined(std::string_view text, size_t pos, int32_t& id) const
    {
        size_t best = 0;
        for (const auto& [piece, pieceId] : userDefined) {
            if (piece.size() > best && text.size() - pos >= piece.size() &&
                std::memcmp(text.data() + pos, piece.data(), piece.size()) == 0) {
                best = piece.size();
                id = pieceId;
            }
        }
        return best;
    }

    void tryPair(Scratch& s, int32_t left, int32_t right) const
    {
        const Symbol& l = s.symbols[static_cast<size_t>(left)];
        const Symbol& r = s.symbols[static_cast<size_t>(right)];
        if (l.sym < 0 || r.sym < 0) return;
        const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l.sym)) << 32) | static_cast<uint32_t>(r.sym);
        const Merge* m = merges.find(key);
        if (!m) return;
        s.heap.push_back(Candidate{m->score, left, right, l.sym, r.sym, m->merged});
        std::push_heap(s.heap.begin(), s.heap.end(), LowerPriority{});
    }
};

SpmBpeEncoder::SpmBpeEncoder() : m_impl(std::make_unique<Impl>()) {}

size_t SpmBpeEncoder::keptScratchBytes() const
{
    size_t bytes = 0;
    m_impl->scratch.forEachKept([&](const Scratch& s) {
        bytes += s.symbols.capacity() * sizeof(Symbol) + s.heap.capacity() * sizeof(Candidate);
    });
    return bytes;
}

size_t SpmBpeEncoder::maxKeptScratchBytes()
{
    return kKeptScratch * kKeptScratchSymbols * (sizeof(Symbol) + sizeof(Candidate));
}
SpmBpeEncoder::~SpmBpeEncoder() = default;

std::unique_ptr<SpmBpeEncoder> SpmBpeEncoder::build(std::string_view serializedModel)
{
    const auto info = SpmModelInfo::parse(serializedModel);
    if (!info) {
        spdlog::debug("tokenizer: fast BPE encoder not used: {}", info.error());
        return nullptr;
    }
    return build(*info);
}

std::unique_ptr<SpmBpeEncoder> SpmBpeEncoder::build(const SpmModelInfo& info)
{
    const auto unsupported = [](const char* why) {
        spdlog::debug("tokenizer: fast BPE encoder not used: {}", why);
        return std::unique_ptr<SpmBpeEncoder>();
    };
    if (info.modelType != SpmModelInfo::kModelTypeBpe) return unsupported("not a BPE model");
    if (info.hasCharsmap) return unsupported("normalizer has a character map");
    if (info.removeExtraWhitespaces) return unsupported("remove_extra_whitespaces is on");
    if (info.treatWhitespaceAsSuffix) return unsupported("treat_whitespace_as_suffix is on");

    std::unique_ptr<SpmBpeEncoder> encoder(new SpmBpeEncoder());
    Impl& impl = *encoder->m_impl;
    impl.pieceCount = static_cast<int32_t>(info.pieceTypes.size());
    impl.byteFallback = info.byteFallback;
    impl.addDummyPrefix = info.addDummyPrefix;
    impl.escapeWhitespaces = info.escapeWhitespaces;

    // sentencepiece's two maps: ordinary (normal, user-defined, unused) and reserved.
    std::unordered_map<std::string_view, int32_t> ordinary;
    std::unordered_map<std::string_view, int32_t> reserved;
    int32_t unkId = -1;
    for (int32_t id = 0; id < impl.pieceCount; ++id) {
        const std::string_view text = info.pieceTexts[static_cast<size_t>(id)];
        const SpmPieceType type = info.pieceTypes[static_cast<size_t>(id)];
        if (type == SpmPieceType::Unused) return unsupported("model has unused pieces");
        const bool isOrdinary = type == SpmPieceType::Normal || type == SpmPieceType::UserDefined;
        if (!(isOrdinary ? ordinary : reserved).emplace(text, id).second) return unsupported("duplicate piece");
        if (type == SpmPieceType::Unknown) unkId = id;
        if (!validUtf8(text)) return unsupported("piece is not valid UTF-8");
        if (type == SpmPieceType::UserDefined) {
            // Matching these in the raw text equals matching them in the normalized text only
            // when normalization cannot touch them.
            if (text.find(' ') != std::string_view::npos || text.find("\xE2\x96\x81") != std::string_view::npos ||
                text.find("\xEF\xBF\xBD") != std::string_view::npos || text.empty())
                return unsupported("user-defined piece contains a space or U+FFFD");
            impl.userDefined.emplace_back(std::string(text), id);
            impl.userFirstByte[static_cast<unsigned char>(text[0])] = true;
        }
    }
    if (unkId < 0) return unsupported("no unknown piece");
    impl.unkId = unkId;
    for (const auto& [text, id] : reserved) {
        if (ordinary.count(text)) return unsupported("piece is both reserved and ordinary");
        if (singleChar(text)) return unsupported("reserved piece is a single character");
    }
    // PieceToId of "<0xXX>": the byte piece, else an ordinary one, else unknown.
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>", b);
        const std::string_view key(name);
        if (const auto it = reserved.find(key); it != reserved.end()) impl.byteIds[static_cast<size_t>(b)] = it->second;
        else if (const auto it2 = ordinary.find(key); it2 != ordinary.end())
            impl.byteIds[static_cast<size_t>(b)] = it2->second;
        else impl.byteIds[static_cast<size_t>(b)] = unkId;
    }

    // Characters: single-character ordinary pieces first, then virtual ids for characters that
    // only occur inside longer pieces.
    std::unordered_map<uint32_t, Impl::CharIds> charMap;
    for (const auto& [text, id] : ordinary) {
        if (const auto cp = singleChar(text)) charMap[*cp] = Impl::CharIds{id, id};
    }
    int32_t nextVirtual = impl.pieceCount;
    auto symOf = [&](std::string_view s) -> int32_t {
        if (const auto it = ordinary.find(s); it != ordinary.end()) return it->second;
        const auto cp = singleChar(s);
        if (!cp) return -1;
        auto [it, inserted] = charMap.try_emplace(*cp, Impl::CharIds{nextVirtual, unkId});
        if (inserted) ++nextVirtual;
        return it->second.sym;
    };
    size_t mergeCount = 0;
    for (const auto& [text, id] : ordinary) mergeCount += text.size();
    impl.merges.reserve(mergeCount / 2 + 16);
    for (const auto& [text, id] : ordinary) {
        const float score = info.pieceScores[static_cast<size_t>(id)];
        for (size_t cut = 0; cut < text.size();) {
            size_t len = 0;
            decodeChar(reinterpret_cast<const unsigned char*>(text.data() + cut), text.size() - cut, len);
            cut += len;
            if (cut >= text.size()) break;
            const int32_t l = symOf(text.substr(0, cut));
            const int32_t r = symOf(text.substr(cut));
            if (l < 0 || r < 0) continue;
            impl.merges.put((static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r),
                            Merge{id, score});
        }
    }
    const std::string_view spaceText = impl.escapeWhitespaces ? std::string_view("\xE2\x96\x81") : " ";
    impl.splitBeforeSpace = true;
    for (const auto& [text, id] : ordinary) {
        for (size_t at = text.find(spaceText); at != std::string_view::npos; at = text.find(spaceText, at + 1)) {
            if (at > 0 && !text.substr(0, at).ends_with(spaceText)) impl.splitBeforeSpace = false;
        }
    }
    impl.chars.reserve(charMap.size() + 16);
    for (uint32_t cp = 0; cp < 128; ++cp) impl.ascii[cp] = Impl::CharIds{-1, unkId};
    for (const auto& [cp, ids] : charMap) {
        if (cp < 128) impl.ascii[cp] = ids;
        else impl.chars.put(cp, ids);
    }
    return encoder;
}

void SpmBpeEncoder::encode(std::string_view text, std::vector<int32_t>& out) const
{
    if (text.empty()) return;
    const Impl& impl = *m_impl;
    const auto lease = impl.scratch.borrow();
    Scratch& s = *lease;
    s.symbols.clear();
    s.heap.clear();
    if (s.symbols.capacity() < text.size() + 1) s.symbols.reserve(text.size() + 1);

    const uint32_t space = impl.escapeWhitespaces ? kSpaceSymbol : uint32_t{' '};
    auto pushChar = [&](uint32_t cp) {
        const Impl::CharIds ids = impl.charIds(cp);
        const auto index = static_cast<int32_t>(s.symbols.size());
        s.symbols.push_back(Symbol{ids.sym, ids.out, index - 1, index + 1, cp, true});
    };
    if (impl.addDummyPrefix) pushChar(space);
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    for (size_t pos = 0; pos < text.size();) {
        const unsigned char b = bytes[pos];
        if (b < 0x80 && !impl.userFirstByte[b]) {
            // ASCII outside user-defined pieces: the common case, no decode needed.
            pushChar(b == ' ' ? space : b);
            ++pos;
            continue;
        }
        if (impl.userFirstByte[b]) {
            int32_t id = -1;
            if (const size_t len = impl.matchUserDefined(text, pos, id)) {
                const auto index = static_cast<int32_t>(s.symbols.size());
                s.symbols.push_back(Symbol{-1, id, index - 1, index + 1, 0, true});
                pos += len;
                continue;
            }
        }
        size_t len = 0;
        uint32_t cp = decodeChar(bytes + pos, text.size() - pos, len);
        if (cp == ' ') cp = space;
        pushChar(cp);
        pos += len;
    }
    const auto n = static_cast<int32_t>(s.symbols.size());
    s.symbols.back().next = -1;

    // Merge word by word where no piece spans a word start (see splitBeforeSpace): the heap stays
    // a word long, and the merges inside each word happen in the same relative order as in one
    // agenda over the whole text, so the result is the same.
    for (int32_t begin = 0; begin < n;) {
        int32_t end = begin + 1;
        if (impl.splitBeforeSpace) {
            while (end < n && !(s.symbols[static_cast<size_t>(end)].cp == space &&
                                s.symbols[static_cast<size_t>(end) - 1].cp != space))
                ++end;
        } else {
            end = n;
        }
        for (int32_t i = begin + 1; i < end; ++i) impl.tryPair(s, i - 1, i);
        begin = end;
        while (!s.heap.empty()) {
            std::pop_heap(s.heap.begin(), s.heap.end(), LowerPriority{});
            const Candidate c = s.heap.back();
            s.heap.pop_back();
            Symbol& l = s.symbols[static_cast<size_t>(c.left)];
            Symbol& r = s.symbols[static_cast<size_t>(c.right)];
            // Stale when either side has merged since (its id changed or it is gone).
            if (!l.alive || !r.alive || l.sym != c.symLeft || r.sym != c.symRight) continue;
            l.sym = c.merged;
            l.out = c.merged;
            l.next = r.next;
            if (r.next >= 0) s.symbols[static_cast<size_t>(r.next)].prev = c.left;
            r.alive = false;
            // Pairs reaching into a neighbouring word find no piece (splitBeforeSpace).
            if (l.prev >= 0) impl.tryPair(s, l.prev, c.left);
            if (l.next >= 0) impl.tryPair(s, c.left, l.next);
        }
    }

    bool prevUnknown = false;
    for (int32_t i = 0; i >= 0; i = s.symbols[static_cast<size_t>(i)].next) {
        const Symbol& sym = s.symbols[static_cast<size_t>(i)];
        if (sym.out != impl.unkId) {
            out.push_back(sym.out);
            prevUnknown = false;
            continue;
        }
        if (impl.byteFallback) {
            unsigned char utf8[4];
            const size_t len = appendUtf8(sym.cp, utf8);
            for (size_t k = 0; k < len; ++k) out.push_back(impl.byteIds[utf8[k]]);
        } else if (!prevUnknown) {
            out.push_back(impl.unkId);  // sentencepiece joins a run of unknowns into one
        }
        prevUnknown = true;
    }
}

struct SpmReferenceEncoder::Impl {
    sentencepiece::SentencePieceProcessor sp;
};

SpmReferenceEncoder::SpmReferenceEncoder() : m_impl(std::make_unique<Impl>()) {}
SpmReferenceEncoder::~SpmReferenceEncoder() = default;

std::unique_ptr<SpmReferenceEncoder> SpmReferenceEncoder::load(std::string_view serializedModel)
{
    std::unique_ptr<SpmReferenceEncoder> encoder(new SpmReferenceEncoder());
    if (!encoder->m_impl->sp.LoadFromSerializedProto(serializedModel).ok()) return nullptr;
    return encoder;
}

std::vector<int32_t> SpmReferenceEncoder::encode(std::string_view text) const
{
    std::vector<int> ids;
    if (!text.empty() && !m_impl->sp.Encode(text, &ids).ok()) return {};
    return std::vector<int32_t>(ids.begin(), ids.end());
}

}  // namespace brook
