// brook-bench: offline benchmarks through the engine's request API.
//   throughput: N requests submitted at once, ignore_eos, as nano-vllm measures it
//               (lengths uniform in [--min-len, --max-len], or fixed --input-len/--output-len).
//   latency:    one request at a time: time to first token and decode tokens/s.
// Model: a folder, or --random-weights tiny|ernie-0.3b (written to a temporary folder).
//   serve, baseline: online, over HTTP against a running server (bench_serve.h).
//   quality: a quantized model against its dense reference on a fixed text (bench_quality.h).
#include "platform/console_utf8.h"
#include "platform/executable_path.h"
#include "platform/process_info.h"
#include "app/bench_quality.h"
#include "app/bench_serve.h"
#include "app/cli_logging.h"
#include "app/launch_flags.h"
#include "launch/engine_launcher.h"
#include "engine/cpu/cpu_features.h"
#include "engine/request_stream.h"
#include "engine/structured_output.h"
#include "engine/utf8_path.h"
#include "engine/tokenizer.h"
#include "testing/test_model_writer.h"

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

using namespace brook;
using BenchClock = std::chrono::steady_clock;

namespace {

struct BenchOptions {
    int numPrompts = 256;
    int minLen = 100, maxLen = 1024;
    int inputLen = 0, outputLen = 0;  // > 0: fixed lengths
    uint64_t seed = 0;
    int warmup = 1;
    int repeats = 3;
    std::string jsonSchemaFile;   // throughput: constrain every output (structured-output cost)
    StructuredOutput structured;  // read from jsonSchemaFile
};

double peakRssMiB() { return peakResidentMiB(); }

std::vector<int32_t> randomPrompt(std::mt19937_64& rng, int length, int vocabLimit)
{
    std::uniform_int_distribution<int32_t> token(3, vocabLimit - 1);
    std::vector<int32_t> ids(static_cast<size_t>(length));
    for (auto& id : ids) id = token(rng);
    return ids;
}

// Where the engine thread spent the run (differences against `before`, taken at the start).
void printStepTimes(const EngineStepTimes& t, long long steps, const EngineStats& before)
{
    const EngineStepTimes& b = before.stepTimes;
    const long long decodeSteps = t.decodeSteps - b.decodeSteps;
    const double decodeSeconds = t.decodeBackendSeconds - b.decodeBackendSeconds;
    std::cout << "engine steps: " << steps - before.steps << " (" << decodeSteps << " decode-only, mean batch "
              << double(t.decodeRows - b.decodeRows) / double(std::max(decodeSteps, 1LL)) << ")\n"
              << "engine thread seconds: backend " << t.backendSeconds - b.backendSeconds << " (decode-only steps "
              << decodeSeconds << ", " << 1e3 * decodeSeconds / double(std::max(decodeSteps, 1LL))
              << " ms each), scheduling " << t.scheduleSeconds - b.scheduleSeconds << ", output processing "
              << t.outputSeconds - b.outputSeconds << ", bookkeeping " << t.bookkeepingSeconds - b.bookkeepingSeconds
              << "\n";
}

// One short request before the timed part, as nano-vllm's bench.py does: first-use costs (GEMM
// plan selection, page faults in fresh buffers) are not part of the steady state measured.
// With a structured output the warm-up uses it too: the vocabulary's byte trie (built on first
// use) and the grammar's first states are not part of the steady state either.
bool warmUp(Engine& engine, std::mt19937_64& rng, int vocabLimit, const StructuredOutput& structured = {})
{
    GenerationRequest r;
    r.prompt = randomPrompt(rng, 16, vocabLimit);
    r.params.maxTokens = 16;
    r.params.ignoreEos = true;
    r.params.structured = structured;
    auto stream = RequestStream::submit(engine, std::move(r));
    if (!stream) {
        std::cerr << "brook-bench: " << stream.error() << "\n";
        return false;
    }
    while ((*stream)->next()) {}
    return true;
}

// The engine publishes its stats after a step's callbacks have run, so a snapshot taken when the
// last request's final output arrives still lacks that step: wait for the idle snapshot, so that
// the run's step counts (and the warm-up's) are whole.
EngineStats settledStats(Engine& engine)
{
    const auto deadline = BenchClock::now() + std::chrono::seconds(2);
    EngineStats s = engine.stats();
    while ((s.numRunning > 0 || s.numWaiting > 0) && BenchClock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        s = engine.stats();
    }
    return s;
}

int runThroughput(Engine& engine, const BenchOptions& o, int vocabLimit)
{
    std::mt19937_64 rng(o.seed);
    std::mt19937_64 warmupRng(o.seed + 1);
    for (int i = 0; i < o.warmup; ++i)
        if (!warmUp(engine, warmupRng, vocabLimit, o.structured)) return 1;
    std::uniform_int_distribution<int> len(o.minLen, o.maxLen);
    std::vector<GenerationRequest> requests;
    long long promptTokens = 0, outputTokens = 0;
    for (int i = 0; i < o.numPrompts; ++i) {
        const int in = o.inputLen > 0 ? o.inputLen : len(rng);
        const int out = o.outputLen > 0 ? o.outputLen : len(rng);
        GenerationRequest r;
        r.prompt = randomPrompt(rng, in, vocabLimit);
        r.params.temperature = 0.6f;
        r.params.seed = uint64_t(i);
        r.params.maxTokens = out;
        r.params.ignoreEos = true;
        r.params.structured = o.structured;
        r.source = "bench";
        requests.push_back(std::move(r));
        promptTokens += in;
        outputTokens += out;
    }
    std::atomic<int> remaining{o.numPrompts};
    std::atomic<long long> generated{0};
    std::mutex doneMutex;
    std::condition_variable done;
    const EngineStats before = settledStats(engine);
    const auto start = BenchClock::now();
    // All at once, as vLLM's benchmark_throughput hands LLM.generate its list: one by one, the
    // engine thread would start stepping the first requests before the rest arrived.
    auto ids = engine.submitAll(std::move(requests), [&](size_t) {
        return OutputCallback([&](const RequestOutput& out) {
            generated += static_cast<long long>(out.newTokenIds.size());
            if (out.finished() && --remaining == 0) {
                std::lock_guard lock(doneMutex);
                done.notify_all();
            }
        });
    });
    if (!ids) {
        std::cerr << "brook-bench: " << ids.error() << "\n";
        return 1;
    }
    {
        std::unique_lock lock(doneMutex);
        done.wait(lock, [&] { return remaining.load() == 0; });
    }
    const double seconds = std::chrono::duration<double>(BenchClock::now() - start).count();
    const EngineStats stats = settledStats(engine);
    if (o.structured.active()) std::cout << "structured output: json schema " << o.jsonSchemaFile << "\n";
    std::cout << "requests: " << o.numPrompts << "\n"
              << "prompt tokens: " << promptTokens << "\n"
              << "output tokens: " << generated.load() << " (asked " << outputTokens << ")\n"
              << "seconds: " << seconds << "\n"
              << "output tokens/s: " << double(generated.load()) / seconds << "\n"
              << "total tokens/s: " << double(promptTokens + generated.load()) / seconds << "\n"
              << "preemptions: " << stats.numPreemptions << "\n"
              << "prefix cache hits: " << stats.prefixCacheHits - before.prefixCacheHits << " of "
              << stats.prefixCacheQueries - before.prefixCacheQueries << " prompt tokens (distinct random prompts)\n"
              << "peak host memory (MiB): " << peakRssMiB() << "\n"
              << "weights (MiB): " << double(stats.memory.weightsBytes) / (1 << 20)
              << ", KV cache (MiB): " << double(stats.memory.kvCacheBytes) / (1 << 20) << "\n";
    printStepTimes(stats.stepTimes, stats.steps, before);
    return 0;
}

int runLatency(Engine& engine, const BenchOptions& o, int vocabLimit)
{
    std::mt19937_64 rng(o.seed);
    const int in = o.inputLen > 0 ? o.inputLen : 128;
    const int out = o.outputLen > 0 ? o.outputLen : 256;
    double bestTtft = 1e9, bestDecode = 0;
    for (int rep = -o.warmup; rep < o.repeats; ++rep) {
        GenerationRequest r;
        r.prompt = randomPrompt(rng, in, vocabLimit);
        r.params.temperature = 0.0f;
        r.params.maxTokens = out;
        r.params.ignoreEos = true;
        const auto start = BenchClock::now();
        auto stream = RequestStream::submit(engine, std::move(r));
        if (!stream) {
            std::cerr << "brook-bench: " << stream.error() << "\n";
            return 1;
        }
        BenchClock::time_point first{};
        int tokens = 0;
        while (auto o2 = (*stream)->next()) {
            tokens += int(o2->newTokenIds.size());
            if (tokens == 1 && first == BenchClock::time_point{}) first = BenchClock::now();
        }
        const auto end = BenchClock::now();
        const double ttft = std::chrono::duration<double>(first - start).count();
        const double decode = double(tokens - 1) / std::chrono::duration<double>(end - first).count();
        if (rep >= 0) {
            std::cout << "run " << rep << ": TTFT " << ttft * 1e3 << " ms, decode " << decode << " tokens/s\n";
            bestTtft = std::min(bestTtft, ttft);
            bestDecode = std::max(bestDecode, decode);
        }
    }
    std::cout << "prompt " << in << ", output " << out << ": best TTFT " << bestTtft * 1e3 << " ms, best decode "
              << bestDecode << " tokens/s\n";
    // Each run draws a new random prompt, so no run is shortened by the prefix cache.
    std::cout << "prefix cache hits: " << engine.stats().prefixCacheHits << " tokens\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    brook::rememberArgv0(argc > 0 ? argv[0] : nullptr);
    brook::useUtf8Console();
    CLI::App app{"brook-bench: measure Brook's engine"};
    app.require_subcommand(1);
    LaunchOptions launch;
    BenchOptions bench;
    std::string randomShape, logLevel = "warn";
    std::string dtype = "bf16";
    for (CLI::App* sub : {app.add_subcommand("throughput", "offline throughput (nano-vllm's test)"),
                          app.add_subcommand("latency", "single-request TTFT and decode speed")}) {
        sub->add_option("--model,-m", launch.modelDir, "model folder");
        sub->add_option("--random-weights", randomShape, "tiny or ernie-0.3b: random weights of that shape")
            ->check(CLI::IsMember({"tiny", "ernie-0.3b"}));
        sub->add_option("--num-prompts", bench.numPrompts)->capture_default_str();
        sub->add_option("--min-len", bench.minLen)->capture_default_str();
        sub->add_option("--max-len", bench.maxLen)->capture_default_str();
        sub->add_option("--input-len", bench.inputLen, "fixed prompt length");
        sub->add_option("--output-len", bench.outputLen, "fixed output length");
        sub->add_option("--seed", bench.seed)->capture_default_str();
        sub->add_option("--repeats", bench.repeats)->capture_default_str();
        sub->add_option("--warmup", bench.warmup, "untimed requests first")->capture_default_str();
        sub->add_option("--json-schema", bench.jsonSchemaFile,
                        "throughput: every output constrained by this JSON schema (a grammar that completes ends "
                        "its request early, so compare output tokens/s)");
        sub->add_option("--log-level", logLevel)->capture_default_str();
        addLaunchFlags(*sub, launch);
    }
    ServeBenchOptions serveBench;
    BaselineOptions baseline;
    addServeBenchFlags(
        *app.add_subcommand("serve", "online benchmark of an OpenAI-compatible server (vllm bench serve)"), serveBench);
    addBaselineFlags(*app.add_subcommand("baseline", "daily check: three standard requests, one line of history"),
                     baseline);
    QualityBenchOptions quality;
    addQualityFlags(
        *app.add_subcommand("quality", "a quantized model against its dense reference: top-1, KL, perplexity"),
        quality);
    CLI11_PARSE(app, argc, argv);
    setUpCliLogging(logLevel);
    if (app.got_subcommand("serve")) return runServeBench(serveBench);
    if (app.got_subcommand("baseline")) return runBaseline(baseline);
    if (app.got_subcommand("quality")) return runQualityBench(quality);
    if (!bench.jsonSchemaFile.empty()) {
        std::ifstream in(pathFromUtf8(bench.jsonSchemaFile), std::ios::binary);
        if (!in) {
            std::cerr << "brook-bench: cannot read " << bench.jsonSchemaFile << "\n";
            return 2;
        }
        bench.structured = {StructuredOutput::Kind::JsonSchema,
                            std::string(std::istreambuf_iterator<char>(in), {}),
                            {},
                            "--json-schema"};
        if (auto valid = checkStructuredOutput(bench.structured); !valid) {
            std::cerr << "brook-bench: " << valid.error() << "\n";
            return 2;
        }
    }

    std::filesystem::path tempDir;
    if (!randomShape.empty()) {
        tempDir = std::filesystem::temp_directory_path() / ("brook-bench-" + std::to_string(processId()));
        testing::TestModelOptions model;
        model.shape = randomShape == "tiny" ? testing::TestModelShape::tiny() : testing::TestModelShape::ernie03b();
        if (auto written = testing::writeTestModel(tempDir, model); !written) {
            std::cerr << "brook-bench: " << written.error() << "\n";
            return 1;
        }
        launch.modelDir = tempDir;
    }
    if (launch.modelDir.empty()) {
        std::cerr << "brook-bench: give --model DIR or --random-weights SHAPE\n";
        return 2;
    }
    if (launch.maxModelLen == 0) launch.maxModelLen = 4096;
    auto launched = launchEngine(launch);
    if (!tempDir.empty()) std::filesystem::remove_all(tempDir);
    if (!launched) {
        std::cerr << "brook-bench: " << launchErrorForCli(launched.failure()) << "\n";
        return 1;
    }
    std::cout << "backend: " << launched->engine->backendName() << "\n";
    if (launched->engine->backendName() == "cpu")  // which vector path ran (BROOK_CPU_ISA lowers it)
        std::cout << "cpu path: " << cpu::cpuIsaName(cpu::activeCpuIsa()) << "\n";
    const int vocabLimit = std::min(launched->modelConfig.vocabSize, launched->engine->tokenizer().vocabSize());
    const bool throughput = app.got_subcommand("throughput");
    return throughput ? runThroughput(*launched->engine, bench, vocabLimit)
                      : runLatency(*launched->engine, bench, vocabLimit);
}
