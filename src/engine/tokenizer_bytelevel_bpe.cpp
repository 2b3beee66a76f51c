#include "engine/tokenizer_bytelevel_bpe.h"

#include "engine/structured/char_ranges.h"  // appendUtf8

#define PCRE2_CODE_UNIT_WIDTH 8
#include <nlohmann/json.hpp>
#include <pcre2.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <queue>
#include <unordered_map>

namespace brook {

namespace {

using nlohmann::json;

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes for
// U+0100 and up, in byte order, so every byte is one visible character of the vocabulary.
std::array<uint32_t, 256> byteCodepoints()
{
    std::array<uint32_t, 256> cps{};
    std::array<bool, 256> printable{};
    for (int b = '!'; b <= '~'; ++b) printable[size_t(b)] = true;
    for (int b = 0xA1; b <= 0xAC; ++b) printable[size_t(b)] = true;
    for (int b = 0xAE; b <= 0xFF; ++b) printable[size_t(b)] = true;
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) cps[size_t(b)] = printable[size_t(b)] ? uint32_t(b) : next++;
    return cps;
}

// The next code point of valid UTF-8 at text[pos], or -1 with `len` the bytes of the maximal
// ill-formed subpart (WHATWG's decoder: one U+FFFD for each).
int32_t nextCodepoint(std::string_view text, size_t pos, size_t& len)
{
    const auto b0 = uint8_t(text[pos]);
    len = 1;
    if (b0 < 0x80) return b0;
    int need = 0;
    uint32_t cp = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1;
        cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2;
        cp = b0 & 0x0F;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3;
        cp = b0 & 0x07;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        return -1;
    }
    for (int i = 0; i < need; ++i) {
        if (pos + len >= text.size()) return -1;
        const auto b = uint8_t(text[pos + len]);
        if (b < lo || b > hi) return -1;
        lo = 0x80;
        hi = 0xBF;
        cp = (cp << 6) | (b & 0x3F);
        ++len;
    }
    return int32_t(cp);
}

// `text` as valid UTF-8 (bad sequences as U+FFFD); `mayCompose`: a code point of U+0300 or more
// is present, below which every string is already in NFC.
std::string sanitizedUtf8(std::string_view text, bool& mayCompose)
{
    std::string out;
    out.reserve(text.size());
    mayCompose = false;
    for (size_t pos = 0; pos < text.size();) {
        size_t len = 0;
        const int32_t cp = nextCodepoint(text, pos, len);
        if (cp < 0) {
            out += "\xEF\xBF\xBD";
            mayCompose = true;
        } else {
            out.append(text.substr(pos, len));
            if (cp >= 0x300) mayCompose = true;
        }
        pos += len;
    }
    return out;
}

std::string nfc(const std::string& text)
{
    utf8proc_uint8_t* mapped = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                            utf8proc_ssize_t(text.size()), &mapped,
                                            utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
    if (n < 0) return text;  // cannot happen on sanitized UTF-8; keep the text rather than lose it
    std::string out(reinterpret_cast<const char*>(mapped), size_t(n));
    std::free(mapped);
    return out;
}

// GPT-2's pre-tokenizer regex, which ByteLevel applies when `use_regex` is on.
constexpr const char* kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

struct Merge {
    int32_t rank;
    int32_t merged;
};

// Lets the word cache be searched with a string_view, without building a std::string per word.
struct TransparentHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct AddedToken {
    std::string content;
    int32_t id;
};

}  // namespace

struct ByteLevelBpe::Impl {
    std::unordered_map<std::string, int32_t> vocab;
    std::vector<std::string> idToToken;  // vocabulary ids; added ones in `added`
    std::unordered_map<uint64_t, Merge> merges;
    std::array<int32_t, 256> byteIds{};
    std::array<std::string, 256> byteChars;
    std::unordered_map<uint32_t, uint8_t> charToByte;
    std::vector<AddedToken> added;  // longest first
    std::unordered_map<int32_t, size_t> addedById;
    std::array<bool, 256> addedFirstByte{};  // some added token starts with this byte
    // Pre-token -> ids, as tokenizers' BPE keeps them (10,000 words): a text repeats its words.
    // Bounded: once full, new words are not added (what tokenizers does).
    static constexpr size_t kWordCacheEntries = 10000;
    mutable std::mutex cacheMutex;
    mutable std::unordered_map<std::string, std::vector<int32_t>, TransparentHash, std::equal_to<>> wordCache;
    bool nfc = false;
    bool ignoreMerges = false;
    pcre2_code* regex = nullptr;
    int32_t vocabSize = 0;

    ~Impl()
    {
        if (regex) pcre2_code_free(regex);
    }

    void bpe(std::string_view piece, std::vector<int32_t>& out) const;    // through the word cache
    void merge(std::string_view piece, std::vector<int32_t>& out) const;  // the BPE itself
    void encodeSegment(std::string_view text, std::vector<int32_t>& out) const;
};

ByteLevelBpe::ByteLevelBpe() : m_impl(std::make_unique<Impl>()) {}
ByteLevelBpe::~ByteLevelBpe() = default;

namespace {

Result<std::string> stringOr(const json& j, const char* key, const char* fallback)
{
    if (!j.contains(key) || j[key].is_null()) return std::string(fallback);
    if (!j[key].is_string()) return makeError(std::string("tokenizer.json: ") + key + " must be a string");
    return j[key].get<std::string>();
}

Result<std::string> splitPattern(const json& pre)
{
    auto refuse = [](const std::string& why) { return makeError("tokenizer.json: pre_tokenizer: " + why); };
    auto byteLevelOk = [](const json& b, bool ownRegex) {
        return b.value("type", "") == "ByteLevel" && !b.value("add_prefix_space", false) &&
               b.value("use_regex", true) == ownRegex;
    };
    if (pre.is_object() && pre.value("type", "") == "ByteLevel") {
        if (!byteLevelOk(pre, true)) return refuse("ByteLevel with add_prefix_space or without its regex is not supported");
        return std::string(kGpt2Pattern);
    }
    if (!pre.is_object() || pre.value("type", "") != "Sequence" || !pre.contains("pretokenizers") ||
        !pre["pretokenizers"].is_array() || pre["pretokenizers"].size() != 2)
        return refuse("only ByteLevel, or a Sequence of a Split and a ByteLevel, is supported");
    const json& split = pre["pretokenizers"][0];
    const json& byteLevel = pre["pretokenizers"][1];
    if (!split.is_object() || split.value("type", "") != "Split") return refuse("the Sequence must start with a Split");
    if (split.value("behavior", "") != "Isolated" || split.value("invert", false))
        return refuse("only a Split with behavior Isolated, not inverted, is supported");
    if (!split.contains("pattern") || !split["pattern"].is_object() || !split["pattern"].contains("Regex") ||
        !split["pattern"]["Regex"].is_string())
        return refuse("the Split needs a pattern.Regex string");
    if (!byteLevel.is_object() || !byteLevelOk(byteLevel, false))
        return refuse("the Split must be followed by a ByteLevel without use_regex or add_prefix_space");
    return split["pattern"]["Regex"].get<std::string>();
}

}  // namespace

Result<std::unique_ptr<ByteLevelBpe>> ByteLevelBpe::fromTokenizerJson(std::string_view text)
{
    // A value of the wrong type somewhere (value() on "lstrip": "yes") is a bad file, not a crash.
    try {
        return load(text);
    } catch (const json::exception& e) {
        return makeError(std::string("tokenizer.json: a field has the wrong type (") + e.what() + ")");
    }
}

Result<std::unique_ptr<ByteLevelBpe>> ByteLevelBpe::load(std::string_view text)
{
    const json root = json::parse(text, nullptr, false);
    if (root.is_discarded() || !root.is_object()) return makeError("tokenizer.json is not a JSON object");
    std::unique_ptr<ByteLevelBpe> tokenizer(new ByteLevelBpe());
    Impl& impl = *tokenizer->m_impl;

    const json& model = root.contains("model") ? root["model"] : json();
    if (!model.is_object() || model.value("type", "") != "BPE")
        return makeError("tokenizer.json: model.type must be BPE for a byte-level BPE tokenizer");
    if (model.contains("dropout") && !model["dropout"].is_null())
        return makeError("tokenizer.json: model.dropout is not supported");
    if (model.value("byte_fallback", false)) return makeError("tokenizer.json: model.byte_fallback is not supported");
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        auto value = stringOr(model, key, "");
        if (!value) return makeError(value.failure());
        if (!value->empty()) return makeError(std::string("tokenizer.json: model.") + key + " is not supported");
    }
    impl.ignoreMerges = model.value("ignore_merges", false);

    const json& normalizer = root.contains("normalizer") ? root["normalizer"] : json();
    if (!normalizer.is_null()) {
        if (!normalizer.is_object() || normalizer.value("type", "") != "NFC")
            return makeError("tokenizer.json: normalizer: only none or NFC is supported");
        impl.nfc = true;
    }

    if (!root.contains("pre_tokenizer")) return makeError("tokenizer.json: pre_tokenizer is missing");
    auto pattern = splitPattern(root["pre_tokenizer"]);
    if (!pattern) return makeError(pattern.failure());
    int errorCode = 0;
    PCRE2_SIZE errorOffset = 0;
    impl.regex = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern->data()), pattern->size(), PCRE2_UTF | PCRE2_UCP,
                               &errorCode, &errorOffset, nullptr);
    if (!impl.regex) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(errorCode, message, sizeof message);
        return makeError("tokenizer.json: pre_tokenizer regex, at offset " + std::to_string(errorOffset) + ": " +
                         reinterpret_cast<const char*>(message));
    }
    pcre2_jit_compile(impl.regex, PCRE2_JIT_COMPLETE);  // optional: without JIT it interprets

    if (!model.contains("vocab") || !model["vocab"].is_object()) return makeError("tokenizer.json: model.vocab must be an object");
    // Ids are dense (0 .. entries - 1): a stray huge id must not make the id table huge.
    const auto entries = int64_t(model["vocab"].size());
    for (const auto& [token, id] : model["vocab"].items()) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= entries)
            return makeError("tokenizer.json: model.vocab['" + token + "'] must be an id below the vocabulary's size");
        const auto value = id.get<int32_t>();
        impl.vocab[token] = value;
        if (size_t(value) >= impl.idToToken.size()) impl.idToToken.resize(size_t(value) + 1);
        impl.idToToken[size_t(value)] = token;
        impl.vocabSize = std::max(impl.vocabSize, value + 1);
    }
    const auto cps = byteCodepoints();
    for (int b = 0; b < 256; ++b) {
        structured::appendUtf8(impl.byteChars[size_t(b)], cps[size_t(b)]);
        impl.charToByte[cps[size_t(b)]] = uint8_t(b);
        auto it = impl.vocab.find(impl.byteChars[size_t(b)]);
        if (it == impl.vocab.end())
            return makeError("tokenizer.json: the vocabulary lacks the byte-level token of byte " + std::to_string(b));
        impl.byteIds[size_t(b)] = it->second;
    }

    if (!model.contains("merges") || !model["merges"].is_array()) return makeError("tokenizer.json: model.merges must be a list");
    int32_t rank = 0;
    for (const json& m : model["merges"]) {
        std::string left, right;
        if (m.is_string()) {
            const std::string s = m.get<std::string>();
            const size_t space = s.find(' ', 1);
            if (space == std::string::npos) return makeError("tokenizer.json: merge '" + s + "' is not 'left right'");
            left = s.substr(0, space);
            right = s.substr(space + 1);
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            left = m[0].get<std::string>();
            right = m[1].get<std::string>();
        } else {
            return makeError("tokenizer.json: merge " + std::to_string(rank) + " is neither 'a b' nor [a, b]");
        }
        const auto l = impl.vocab.find(left), r = impl.vocab.find(right), merged = impl.vocab.find(left + right);
        if (l == impl.vocab.end() || r == impl.vocab.end() || merged == impl.vocab.end())
            return makeError("tokenizer.json: merge " + std::to_string(rank) + " names a token not in the vocabulary");
        const uint64_t key = (uint64_t(uint32_t(l->second)) << 32) | uint32_t(r->second);
        impl.merges.emplace(key, Merge{rank, merged->second});  // a repeated pair keeps its first rank
        ++rank;
    }

    if (root.contains("added_tokens") && !root["added_tokens"].is_null()) {
        if (!root["added_tokens"].is_array()) return makeError("tokenizer.json: added_tokens must be a list");
        for (const json& a : root["added_tokens"]) {
            if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id") ||
                !a["id"].is_number_integer() || a["id"].get<int64_t>() < 0 || a["id"].get<int64_t>() >= (1 << 24))
                return makeError("tokenizer.json: every added token needs a content string and an id");
            const std::string content = a["content"].get<std::string>();
            for (const char* flag : {"lstrip", "rstrip", "single_word", "normalized"})
                if (a.value(flag, false))
                    return makeError("tokenizer.json: added token '" + content + "': " + flag + " is not supported");
            if (content.empty()) return makeError("tokenizer.json: an added token is empty");
            const auto id = a["id"].get<int32_t>();
            impl.added.push_back(AddedToken{content, id});
            impl.vocabSize = std::max(impl.vocabSize, id + 1);
        }
        std::stable_sort(impl.added.begin(), impl.added.end(),
                         [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
        for (size_t i = 0; i < impl.added.size(); ++i) {
            impl.addedById[impl.added[i].id] = i;
            impl.addedFirstByte[uint8_t(impl.added[i].content[0])] = true;
        }
    }
    return tokenizer;
}

// One pre-token's ids: merges by rank, the leftmost first among equal ranks (tokenizers' order).
void ByteLevelBpe::Impl::bpe(std::string_view piece, std::vector<int32_t>& out) const
{
    const bool cacheable = piece.size() <= 64;  // long runs (whitespace, code) seldom repeat
    if (cacheable) {
        std::lock_guard lock(cacheMutex);
        if (auto it = wordCache.find(piece); it != wordCache.end()) {
            out.insert(out.end(), it->second.begin(), it->second.end());
            return;
        }
    }
    const size_t first = out.size();
    merge(piece, out);
    if (cacheable) {
        std::lock_guard lock(cacheMutex);
        if (wordCache.size() < kWordCacheEntries)
            wordCache.emplace(std::string(piece), std::vector<int32_t>(out.begin() + std::ptrdiff_t(first), out.end()));
    }
}

void ByteLevelBpe::Impl::merge(std::string_view piece, std::vector<int32_t>& out) const
{
    if (ignoreMerges || piece.size() == 1) {
        std::string chars;
        for (unsigned char b : piece) chars += byteChars[b];
        if (auto it = vocab.find(chars); it != vocab.end()) {
            out.push_back(it->second);
            return;
        }
    }
    struct Symbol {
        int32_t id;
        int32_t prev;
        int32_t next;
    };
    std::vector<Symbol> symbols(piece.size());
    for (size_t i = 0; i < piece.size(); ++i)
        symbols[i] = Symbol{byteIds[uint8_t(piece[i])], int32_t(i) - 1, i + 1 < piece.size() ? int32_t(i + 1) : -1};
    struct Candidate {
        int32_t rank;
        int32_t pos;
        int32_t merged;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
    auto consider = [&](int32_t pos) {
        const int32_t next = symbols[size_t(pos)].next;
        if (next < 0) return;
        const uint64_t key = (uint64_t(uint32_t(symbols[size_t(pos)].id)) << 32) | uint32_t(symbols[size_t(next)].id);
        if (auto it = merges.find(key); it != merges.end()) queue.push(Candidate{it->second.rank, pos, it->second.merged});
    };
    for (int32_t i = 0; i + 1 < int32_t(piece.size()); ++i) consider(i);
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& left = symbols[size_t(c.pos)];
        if (left.id < 0 || left.next < 0) continue;  // merged away, or nothing to its right now
        // Stale when the pair at `pos` is no longer the one this candidate merges.
        const uint64_t key = (uint64_t(uint32_t(left.id)) << 32) | uint32_t(symbols[size_t(left.next)].id);
        const auto it = merges.find(key);
        if (it == merges.end() || it->second.merged != c.merged) continue;
        Symbol& right = symbols[size_t(left.next)];
        left.id = c.merged;
        left.next = right.next;
        if (right.next >= 0) symbols[size_t(right.next)].prev = c.pos;
        right.id = -1;
        if (left.prev >= 0) consider(left.prev);
        consider(c.pos);
    }
    for (int32_t i = 0; i >= 0; i = symbols[size_t(i)].next) out.push_back(symbols[size_t(i)].id);
}

void ByteLevelBpe::Impl::encodeSegment(std::string_view raw, std::vector<int32_t>& out) const
{
    if (raw.empty()) return;
    bool mayCompose = false;
    std::string text = sanitizedUtf8(raw, mayCompose);
    if (nfc && mayCompose) text = brook::nfc(text);
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(regex, nullptr);
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    // A pattern from a hostile file may backtrack without end: past the limit the rest of the text
    // is one piece, and encoding ends.
    pcre2_set_match_limit(context, 10'000'000);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t last = 0, offset = 0;
    while (offset < text.size()) {
        // The text is valid UTF-8 (sanitized above): without NO_UTF_CHECK every call would check
        // the whole subject again, quadratic in the text.
        const int rc = pcre2_match(regex, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match, context);
        if (rc < 0) break;  // no match (or a resource limit): the rest is one gap
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
        const size_t start = ov[0], end = ov[1];
        if (start > last) bpe(std::string_view(text).substr(last, start - last), out);
        if (end > start) {
            bpe(std::string_view(text).substr(start, end - start), out);
            last = offset = end;
        } else {
            // An empty match: step over one character so the loop moves on.
            size_t len = 1;
            nextCodepoint(text, start, len);
            offset = start + len;
        }
    }
    if (last < text.size()) bpe(std::string_view(text).substr(last), out);
    pcre2_match_context_free(context);
    pcre2_match_data_free(match);
}

void ByteLevelBpe::encodeOrdinary(std::string_view text, std::vector<int32_t>& out) const
{
    m_impl->encodeSegment(text, out);
}

std::vector<int32_t> ByteLevelBpe::encode(std::string_view text) const
{
    std::vector<int32_t> out;
    const Impl& impl = *m_impl;
    size_t segment = 0;
    for (size_t pos = 0; pos < text.size();) {
        if (!impl.addedFirstByte[uint8_t(text[pos])]) {
            ++pos;
            continue;
        }
        const AddedToken* found = nullptr;
        for (const AddedToken& a : impl.added)  // longest first: the first that matches is the longest
            if (text.compare(pos, a.content.size(), a.content) == 0) {
                found = &a;
                break;
            }
        if (!found) {
            ++pos;
            continue;
        }
        impl.encodeSegment(text.substr(segment, pos - segment), out);
        out.push_back(found->id);
        pos += found->content.size();
        segment = pos;
    }
    impl.encodeSegment(text.substr(segment), out);
    return out;
}

std::string ByteLevelBpe::decode(std::span<const int32_t> ids) const
{
    const Impl& impl = *m_impl;
    std::string out;
    for (const int32_t id : ids) {
        if (auto a = impl.addedById.find(id); a != impl.addedById.end()) {
            out += impl.added[a->second].content;
            continue;
        }
        if (id < 0 || size_t(id) >= impl.idToToken.size()) continue;
        const std::string& token = impl.idToToken[size_t(id)];
        for (size_t pos = 0; pos < token.size();) {
            size_t len = 1;
            const int32_t cp = nextCodepoint(token, pos, len);
            auto byte = cp >= 0 ? impl.charToByte.find(uint32_t(cp)) : impl.charToByte.end();
            if (byte != impl.charToByte.end()) out += char(byte->second);
            else out.append(token, pos, len);
            pos += len;
        }
    }
    return out;
}

int32_t ByteLevelBpe::vocabSize() const { return m_impl->vocabSize; }

int32_t ByteLevelBpe::tokenId(std::string_view token) const
{
    for (const AddedToken& a : m_impl->added)
        if (a.content == token) return a.id;
    auto it = m_impl->vocab.find(std::string(token));
    return it == m_impl->vocab.end() ? -1 : it->second;
}

}  // namespace brook
