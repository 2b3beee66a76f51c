// tokenizer_bench: prompt tokenization cost per token (issue 19: the tokenizer runs on the HTTP
// thread before a request reaches the engine). Encodes the test corpus (English, Chinese, code,
// share/brook/test-corpus) and a chat-shaped mix of all three with special tokens, many times,
// with Brook's Tokenizer::encode and with libsentencepiece's own Encode (the encoder Brook used
// before the fast BPE path), and prints microseconds per output token. Those rows run with the
// tokenizer's chunk cache off (every call encodes); the last row is what the cache is for: turn 8
// of a chat, whose 7 earlier turns were encoded before, with a new last message every call.
//
// --grow N appends pieces to the trained model until it has N (ERNIE has 103,424 ids): each a
// concatenation of two existing pieces, scored below all of them, none with "▁" after another
// character (as in a whitespace-split sentencepiece model), so the lookup tables have a real
// vocabulary's size. The test corpus alone trains at most a few thousand pieces.
//
// --tokenizer-json FILE (repeatable): the byte-level BPE of a Hugging Face tokenizer.json (Qwen3,
// Llama 3) on the same texts, in MB/s beside the sentencepiece path's MB/s (issue 45: per byte no
// slower than the sentencepiece path).
//
//   tokenizer_bench [--model-dir DIR | --vocab N [--grow N]] [--seconds S] [--tokenizer-json FILE]
#include "engine/regular_file.h"
#include "engine/tokenizer.h"
#include "engine/tokenizer_bytelevel_bpe.h"
#include "engine/tokenizer_spm_bpe.h"
#include "platform/resource_path.h"
#include "testing/test_tokenizer_writer.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

using namespace brook;
using BenchClock = std::chrono::steady_clock;

namespace {

std::string readText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs encode repeatedly for about `seconds`; returns us per token and the token count.
template <typename Encode>
std::pair<double, size_t> measure(Encode&& encode, double seconds)
{
    size_t tokens = encode();
    size_t calls = 0;
    const auto start = BenchClock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
        for (int i = 0; i < 8; ++i) encode();
        calls += 8;
        elapsed = std::chrono::duration<double>(BenchClock::now() - start).count();
    }
    return {elapsed * 1e6 / static_cast<double>(calls * tokens), tokens};
}

void putVarint(std::string& out, uint64_t v)
{
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

// Reads the ordinary pieces of a serialized ModelProto: field 1 messages, their field 1 text,
// field 2 score, field 3 type (1 normal).
std::vector<std::pair<std::string, float>> normalPieces(const std::string& model)
{
    std::vector<std::pair<std::string, float>> pieces;
    size_t p = 0;
    auto varint = [&](const std::string& s, size_t& i) {
        uint64_t v = 0;
        for (int shift = 0; i < s.size(); shift += 7) {
            const auto b = static_cast<uint8_t>(s[i++]);
            v |= uint64_t(b & 0x7F) << shift;
            if (!(b & 0x80)) break;
        }
        return v;
    };
    while (p < model.size()) {
        const uint64_t key = varint(model, p);
        const uint64_t wire = key & 7;
        if (wire == 0) {
            varint(model, p);
            continue;
        }
        if (wire == 5) {
            p += 4;
            continue;
        }
        if (wire == 1) {
            p += 8;
            continue;
        }
        const uint64_t len = varint(model, p);
        if ((key >> 3) == 1) {
            const std::string msg = model.substr(p, len);
            std::string text;
            float score = 0;
            uint64_t type = 1;
            for (size_t q = 0; q < msg.size();) {
                const uint64_t k = varint(msg, q);
                if ((k & 7) == 2) {
                    const uint64_t l = varint(msg, q);
                    text = msg.substr(q, l);
                    q += l;
                } else if ((k & 7) == 5) {
                    std::memcpy(&score, msg.data() + q, 4);
                    q += 4;
                } else {
                    type = varint(msg, q);
                }
            }
            if (type == 1) pieces.emplace_back(text, score);
        }
        p += len;
    }
    return pieces;
}

// Appends pieces (repeated field 1, so they take the next ids) up to `target` in all.
std::string grownModel(const std::string& model, int target)
{
    auto pieces = normalPieces(model);
    std::set<std::string> seen;
    float lowest = 0;
    for (const auto& [text, score] : pieces) {
        seen.insert(text);
        lowest = std::min(lowest, score);
    }
    const std::string space = "\xE2\x96\x81";
    std::mt19937 rng(7);
    std::string out = model;
    int total = static_cast<int>(pieces.size());
    while (total < target) {
        const auto& a = pieces[rng() % pieces.size()].first;
        const auto& b = pieces[rng() % pieces.size()].first;
        if (b.find(space) != std::string::npos) continue;
        std::string text = a + b;
        if (!seen.insert(text).second) continue;
        lowest -= 1.0f;
        std::string msg;
        putVarint(msg, (1 << 3) | 2);
        putVarint(msg, text.size());
        msg += text;
        putVarint(msg, (2 << 3) | 5);
        msg.append(reinterpret_cast<const char*>(&lowest), 4);
        putVarint(out, (1 << 3) | 2);
        putVarint(out, msg.size());
        out += msg;
        pieces.emplace_back(text, lowest);
        ++total;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app("tokenizer_bench: prompt tokenization, us per token");
    std::string modelDir;
    int vocab = 2000;
    double seconds = 1.0;
    int grow = 0;
    std::vector<std::string> tokenizerJsons;
    app.add_option("--model-dir", modelDir, "a model folder with tokenizer.model (default: train a test tokenizer)");
    app.add_option("--vocab", vocab, "pieces of the trained test tokenizer");
    app.add_option("--seconds", seconds, "time per measurement");
    app.add_option("--grow", grow, "append synthetic pieces up to this many (103424: ERNIE's size)");
    app.add_option("--tokenizer-json", tokenizerJsons, "a Hugging Face tokenizer.json to time as well (repeatable)");
    CLI11_PARSE(app, argc, argv);

    std::filesystem::path dir = modelDir;
    if (modelDir.empty()) {
        dir = std::filesystem::temp_directory_path() /
              ("brook-tokenizer-bench-" + std::to_string(vocab) + "-" + std::to_string(grow));
        testing::TestTokenizerOptions options;
        options.vocabSize = vocab;
        if (auto written = testing::writeTestTokenizer(dir, options); !written) {
            std::cerr << written.error() << "\n";
            return 1;
        }
        if (grow > 0) {
            const auto grown = grownModel(readText(dir / "tokenizer.model"), grow);
            std::ofstream(dir / "tokenizer.model", std::ios::binary | std::ios::trunc) << grown;
        }
    }
    auto tokenizer = Tokenizer::load(dir, 0);
    auto cachingTokenizer = Tokenizer::load(dir);
    if (!tokenizer || !cachingTokenizer) {
        std::cerr << tokenizer.error() << "\n";
        return 1;
    }
    const std::string serialized = readText(dir / "tokenizer.model");
    auto reference = SpmReferenceEncoder::load(serialized);

    const std::filesystem::path corpus = findResource("test-corpus");
    std::vector<std::pair<std::string, std::string>> texts;
    for (const char* name : {"en", "zh", "code"})
        texts.emplace_back(name, readText(corpus / (std::string(name) + ".txt")));
    texts.emplace_back("chat", (*tokenizer)->clsToken() + "User: " + texts[0].second + "\n" + texts[1].second +
                                   "\nAssistant: " + texts[2].second + (*tokenizer)->sepToken() +
                                   "User: " + texts[0].second.substr(0, 1000) + "\nAssistant: ");

    if (!reference) {
        std::cerr << "sentencepiece cannot load " << dir.string() << "\n";
        return 1;
    }
    for (const auto& [name, text] : texts) {
        // The bench is only worth its numbers if the ids are sentencepiece's.
        if (name != "chat" && (*tokenizer)->encode(text) != reference->encode(text)) {
            std::cerr << "ids differ from sentencepiece's on " << name << "\n";
            return 1;
        }
    }
    std::cout << "tokenizer " << dir.string() << ", " << (*tokenizer)->vocabSize() << " ids\n";
    std::cout << "text    bytes  tokens  brook_us_per_token  sentencepiece_us_per_token  speedup\n";
    for (const auto& [name, sample] : texts) {
        const std::string& text = sample;  // clang before 16 cannot capture a structured binding
        const auto brook = measure([&] { return (*tokenizer)->encode(text).size(); }, seconds);
        const auto spm = measure([&] { return reference->encode(text).size(); }, seconds);
        std::cout << name << "\t" << text.size() << "\t" << brook.second << "\t" << brook.first << "\t" << spm.first
                  << "\t" << spm.first / brook.first << "\n";
    }

    for (const std::string& file : tokenizerJsons) {
        auto byteLevel = ByteLevelBpe::fromTokenizerJson(readText(file));
        if (!byteLevel) {
            std::cerr << file << ": " << byteLevel.error() << "\n";
            return 1;
        }
        std::cout << "byte-level BPE " << file << ", " << (*byteLevel)->vocabSize() << " ids\n";
        std::cout << "text    bytes  tokens  us_per_token  MB_per_s  sentencepiece_path_MB_per_s\n";
        for (const auto& [name, sample] : texts) {
            const std::string& text = sample;
            const auto bytes = measure([&] { return (*byteLevel)->encode(text).size(); }, seconds);
            const auto spm = measure([&] { return (*tokenizer)->encode(text).size(); }, seconds);
            const double mbps = double(text.size()) / (bytes.first * double(bytes.second));
            const double spmMbps = double(text.size()) / (spm.first * double(spm.second));
            std::cout << name << "\t" << text.size() << "\t" << bytes.second << "\t" << bytes.first << "\t" << mbps
                      << "\t" << spmMbps << "\n";
        }
    }

    // Turn 8 of a chat: 7 exchanges of the corpus' text, then a user message that is new on every
    // call (a counter in it), as a multi-turn client sends them.
    const std::string& cls = (*cachingTokenizer)->clsToken();
    const std::string& sep = (*cachingTokenizer)->sepToken();
    std::string history = cls;
    for (int turn = 0; turn < 7; ++turn) {
        const std::string& text = texts[size_t(turn) % 3].second;
        const size_t at = (size_t(turn) * 997) % (text.size() / 2);
        history += "User: " + text.substr(at, 300) + "\nAssistant: " + text.substr(at + 300, 700) + sep;
    }
    long long call = 0;
    const auto turnPrompt = [&] {
        return history + "User: message " + std::to_string(call++) + " " + texts[0].second.substr(0, 200) +
               "\nAssistant: ";
    };
    (void)(*cachingTokenizer)->encode(turnPrompt());  // the history's chunks enter the cache
    const auto uncachedTurn = measure([&] { return (*tokenizer)->encode(turnPrompt()).size(); }, seconds);
    const auto cachedTurn = measure([&] { return (*cachingTokenizer)->encode(turnPrompt()).size(); }, seconds);
    std::cout << "chat turn 8 (" << turnPrompt().size() << " bytes, " << uncachedTurn.second
              << " tokens): chunk cache off " << uncachedTurn.first * double(uncachedTurn.second) << " us a prompt, on "
              << cachedTurn.first * double(cachedTurn.second) << " us\n";
    return 0;
}
