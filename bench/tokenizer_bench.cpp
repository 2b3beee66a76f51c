// tokenizer_bench: prompt tokenization cost per token (issue 19: the tokenizer runs on the HTTP
// thread before a request reaches the engine). Encodes the test corpus (English, Chinese, code,
// share/brook/test-corpus) and a chat-shaped mix of all three with special tokens, many times,
// with Brook's Tokenizer::encode and with libsentencepiece's own Encode (the encoder Brook used
// before the fast BPE path), and prints microseconds per output token.
//
//   tokenizer_bench [--model-dir DIR | --vocab N] [--seconds S]
#include "engine/regular_file.h"
#include "engine/tokenizer.h"
#include "engine/tokenizer_spm_bpe.h"
#include "platform/resource_path.h"
#include "testing/test_tokenizer_writer.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
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

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app("tokenizer_bench: prompt tokenization, us per token");
    std::string modelDir;
    int vocab = 2000;
    double seconds = 1.0;
    app.add_option("--model-dir", modelDir, "a model folder with tokenizer.model (default: train a test tokenizer)");
    app.add_option("--vocab", vocab, "pieces of the trained test tokenizer");
    app.add_option("--seconds", seconds, "time per measurement");
    CLI11_PARSE(app, argc, argv);

    std::filesystem::path dir = modelDir;
    if (modelDir.empty()) {
        dir = std::filesystem::temp_directory_path() / ("brook-tokenizer-bench-" + std::to_string(vocab));
        testing::TestTokenizerOptions options;
        options.vocabSize = vocab;
        if (auto written = testing::writeTestTokenizer(dir, options); !written) {
            std::cerr << written.error() << "\n";
            return 1;
        }
    }
    auto tokenizer = Tokenizer::load(dir);
    if (!tokenizer) {
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

    std::cout << "tokenizer " << dir.string() << ", " << (*tokenizer)->vocabSize() << " ids\n";
    std::cout << "text    bytes  tokens  brook_us_per_token  sentencepiece_us_per_token  speedup\n";
    for (const auto& [name, text] : texts) {
        const auto brook = measure([&] { return (*tokenizer)->encode(text).size(); }, seconds);
        const auto spm = measure([&] { return reference->encode(text).size(); }, seconds);
        std::cout << name << "\t" << text.size() << "\t" << brook.second << "\t" << brook.first << "\t" << spm.first
                  << "\t" << spm.first / brook.first << "\n";
    }
    return 0;
}
