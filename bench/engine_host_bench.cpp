// engine_host_bench: the engine's own host cost per step and per generated token, with a backend
// that computes nothing (it answers each row with a pseudo-random token at once). What is left
// is scheduling, batch building, output processing (detokenizer, stop checks, callbacks) and
// bookkeeping: the part of every GPU step that the GPU waits for. Runs nano-vllm's mix by default.
//   engine_host_bench [--num-prompts 256] [--tokens tokenizer|vocab] [--no-enable-prefix-caching]
// Prompts are distinct random ids, so prefix caching finds nothing and what it adds is its own
// bookkeeping (block hashes, the cache's map and pool): compare with --no-enable-prefix-caching.
// --tokens tokenizer: sampled ids are sentencepiece pieces (text, as a trained model makes);
// vocab: ids anywhere in ERNIE's 103,424 (what random weights sample: mostly past the test
// tokenizer's pieces, so they decode to nothing).
#include "engine/backend.h"
#include "engine/engine.h"
#include "engine/tokenizer.h"
#include "testing/test_model_writer.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <random>

using namespace brook;

namespace {

class InstantBackend final : public Backend {
public:
    InstantBackend(ModelConfig config, int tokenLimit) : m_config(std::move(config)), m_tokenLimit(tokenLimit) {}

    std::string name() const override { return "instant"; }
    std::string kvCacheDtype() const override { return "auto"; }
    const ModelConfig& config() const override { return m_config; }
    int numKvBlocks() const override { return 1 << 20; }
    int blockSize() const override { return 16; }
    BackendMemory memory() const override { return {}; }

    std::vector<SampleResult> step(std::span<const BatchSequence> batch) override
    {
        std::vector<SampleResult> out;
        for (const BatchSequence& b : batch)
            if (b.sample) out.push_back({int32_t(m_rng() % uint64_t(m_tokenLimit)), 0.0f, {}});
        return out;
    }
    std::vector<float> logits(std::span<const BatchSequence>) override { return {}; }

private:
    ModelConfig m_config;
    int m_tokenLimit;
    std::mt19937_64 m_rng{7};
};

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"engine_host_bench: the engine's host cost per step, with a backend that computes nothing"};
    int numPrompts = 256, minLen = 100, maxLen = 1024;
    std::string tokens = "tokenizer";
    bool prefixCaching = true;
    app.add_option("--num-prompts", numPrompts)->capture_default_str();
    app.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", prefixCaching, "default: on");
    app.add_option("--min-len", minLen)->capture_default_str();
    app.add_option("--max-len", maxLen)->capture_default_str();
    app.add_option("--tokens", tokens, "sampled ids: tokenizer pieces or the whole vocabulary")
        ->check(CLI::IsMember({"tokenizer", "vocab"}))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    const auto dir =
        std::filesystem::temp_directory_path() / ("brook-host-bench-" + std::to_string(std::random_device{}()));
    constexpr int kTokenizerPieces = 1200;
    if (auto written = testing::writeTestTokenizer(dir, kTokenizerPieces); !written) {
        std::cerr << written.error() << "\n";
        return 1;
    }
    auto tokenizer = Tokenizer::load(dir);
    std::filesystem::remove_all(dir);
    if (!tokenizer) {
        std::cerr << tokenizer.error() << "\n";
        return 1;
    }
    ModelConfig config;
    config.vocabSize = 103424;
    const int tokenLimit = tokens == "tokenizer" ? kTokenizerPieces : config.vocabSize;
    EngineConfig engineConfig;
    engineConfig.scheduler.maxNumSeqs = 256;
    engineConfig.maxModelLen = 4096;
    engineConfig.enablePrefixCaching = prefixCaching;
    Engine engine(engineConfig, std::make_unique<InstantBackend>(config, tokenLimit), std::move(tokenizer).value(), {});

    std::mt19937_64 rng(0);
    std::uniform_int_distribution<int> len(minLen, maxLen);
    std::mutex mutex;
    std::condition_variable done;
    int remaining = numPrompts;
    long long generated = 0;
    const EngineStats before = engine.stats();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < numPrompts; ++i) {
        GenerationRequest r;
        std::vector<int32_t> prompt(size_t(len(rng)));
        for (int32_t& id : prompt) id = int32_t(3 + rng() % uint64_t(kTokenizerPieces - 3));
        r.prompt = std::move(prompt);
        r.params.temperature = 0.6f;
        r.params.maxTokens = len(rng);
        r.params.ignoreEos = true;
        auto id = engine.submit(std::move(r), [&](const RequestOutput& out) {
            std::lock_guard lock(mutex);
            generated += static_cast<long long>(out.newTokenIds.size());
            if (out.finished() && --remaining == 0) done.notify_all();
        });
        if (!id) {
            std::cerr << id.error() << "\n";
            return 1;
        }
    }
    {
        std::unique_lock lock(mutex);
        done.wait(lock, [&] { return remaining == 0; });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const EngineStats s = engine.stats();
    const EngineStepTimes& t = s.stepTimes;
    const long long steps = s.steps - before.steps;
    std::cout << "requests " << numPrompts << ", generated tokens " << generated << ", engine steps " << steps
              << ", sampled ids: " << tokens << ", prefix caching " << (prefixCaching ? "on" : "off") << " ("
              << s.prefixCacheHits << " of " << s.prefixCacheQueries << " prompt tokens hit)\n"
              << "wall " << seconds * 1e3 << " ms: " << 1e6 * seconds / double(steps) << " us per step, "
              << 1e9 * seconds / double(generated) << " ns per token\n"
              << "engine thread ms: schedule " << t.scheduleSeconds * 1e3 << ", backend " << t.backendSeconds * 1e3
              << ", output processing " << t.outputSeconds * 1e3 << " (" << 1e9 * t.outputSeconds / double(generated)
              << " ns per token), bookkeeping " << t.bookkeepingSeconds * 1e3 << "\n";
    return 0;
}
