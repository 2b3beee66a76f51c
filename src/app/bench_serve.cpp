// brook-bench serve: the flags and the printed report around ServeBenchmark (src/server), which
// the desktop app's load generator runs too.
#include "app/bench_serve.h"

#include "loadgen/multi_turn_benchmark.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <tuple>

namespace brook {

using nlohmann::json;

namespace {

// serve's own --log-level (debug: one line per request with its send and first-byte times, to join
// with brook-serve's "first token hops" lines); applied when the run starts, after the default.
std::string g_serveLogLevel;

void printLine(const char* name, double value, int decimals = 2) { std::printf("%-40s %.*f\n", name, decimals, value); }

// A section title centred in a 50-column rule, as vLLM prints them.
void printTitle(const std::string& title)
{
    const size_t pad = title.size() < 50 ? 50 - title.size() : 0;
    std::printf("%s%s%s\n", std::string(pad / 2, '-').c_str(), title.c_str(), std::string(pad - pad / 2, '-').c_str());
}

}  // namespace

void addServeBenchFlags(CLI::App& app, ServeBenchOptions& o)
{
    app.add_option("--base-url", o.baseUrl, "server URL, e.g. http://127.0.0.1:8000 (default: --host/--port)");
    app.add_option("--host", o.host)->capture_default_str();
    app.add_option("--port", o.port)->capture_default_str();
    app.add_option("--endpoint", o.endpoint, "/v1/completions or /v1/chat/completions")->capture_default_str();
    app.add_option("--model", o.model, "model name (default: the server's first)");
    app.add_option("--api-key", o.apiKey, "bearer key (default: $OPENAI_API_KEY)");
    app.add_option("--dataset-name", o.datasetName,
                   "random, or multi-turn: chat conversations resending their history (--num-prompts of them)")
        ->check(CLI::IsMember({"random", "multi-turn"}))
        ->capture_default_str();
    app.add_option("--multi-turn-turns", o.multiTurnTurns, "multi-turn: user turns per conversation")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--multi-turn-system-len", o.multiTurnSystemLen,
                   "multi-turn: tokens of the system prompt every conversation shares")
        ->check(CLI::Range(0, 1 << 20))
        ->capture_default_str();
    app.add_option("--num-prompts", o.numPrompts)->capture_default_str();
    app.add_option("--random-input-len", o.randomInputLen)->capture_default_str();
    app.add_option("--random-output-len", o.randomOutputLen)->capture_default_str();
    app.add_option("--random-range-ratio", o.randomRangeRatio, "lengths vary by this fraction")->capture_default_str();
    app.add_option("--request-rate", o.requestRate, "requests per second (default inf: all at once)");
    app.add_option("--burstiness", o.burstiness, "gamma shape of arrival gaps (1: Poisson)")->capture_default_str();
    app.add_option("--max-concurrency", o.maxConcurrency, "requests in flight at most (0: no limit)");
    app.add_option("--duration", o.durationSeconds, "seconds after which no new request is sent (0: send all)");
    app.add_option("--seed", o.seed)->capture_default_str();
    app.add_option("--tokenizer", o.tokenizer, "model folder whose tokenizer makes exact-length prompts");
    app.add_flag("--ignore-eos", o.ignoreEos, "generate exactly the output length");
    app.add_option("--temperature", o.temperature)->capture_default_str();
    app.add_option("--save-result", o.saveResult, "write the results as JSON to this file");
    app.add_option("--log-level", g_serveLogLevel, "trace, debug, info, warn, error (default warn)");
}

static int runMultiTurnBench(const ServeBenchOptions& o)
{
    std::cout << "Multi-turn chat: " << o.numPrompts << " conversations of " << o.multiTurnTurns
              << " turns, system prompt " << o.multiTurnSystemLen << " tokens, " << o.randomInputLen
              << " per question, " << o.randomOutputLen << " per answer\nMaximum conversation concurrency: "
              << (o.maxConcurrency > 0 ? std::to_string(o.maxConcurrency) : "None") << "\n";
    MultiTurnChatBenchmark benchmark(o);
    auto ran = benchmark.run();
    if (!ran) {
        std::cerr << "brook-bench: " << ran.error() << "\n";
        return 1;
    }
    const MultiTurnResult& r = *ran;
    if (!r.errors.empty()) std::cerr << "first error: " << r.errors.front() << "\n";
    std::printf("========== Multi-turn Chat Benchmark Result ==========\n");
    printLine("Successful requests:", r.completed, 0);
    printLine("Failed requests:", double(r.errors.size()), 0);
    printLine("Benchmark duration (s):", r.duration);
    printLine("Total input tokens:", double(r.totalInputTokens), 0);
    printLine("Total generated tokens:", double(r.totalOutputTokens), 0);
    printLine("Output token throughput (tok/s):", r.outputThroughput);
    printLine("Mean TTFT (ms):", r.ttft.mean);
    printLine("Mean TPOT (ms):", r.tpot.mean);
    if (r.prefixCacheQueries && *r.prefixCacheQueries > 0)
        printLine("Prefix cache hit rate (%):", 100.0 * *r.prefixCacheHits / *r.prefixCacheQueries);
    printTitle("Time to First Token by turn");
    std::printf("%-6s %12s %12s %12s %14s %14s\n", "turn", "mean (ms)", "median (ms)", "p99 (ms)", "prompt tok",
                "cached tok");
    for (size_t t = 0; t < r.byTurn.size(); ++t) {
        const MultiTurnTurnStats& s = r.byTurn[t];
        std::printf("%-6zu %12.2f %12.2f %12.2f %14.1f %14.1f\n", t + 1, s.ttft.mean, s.ttft.median, s.ttft.p99,
                    s.meanPromptTokens, s.meanCachedTokens);
    }
    std::printf("==================================================\n");
    if (!o.saveResult.empty()) {
        std::ofstream out(o.saveResult);
        out << r.toJson().dump(2, ' ', false, json::error_handler_t::replace) << "\n";
        if (!out) {
            std::cerr << "brook-bench: cannot write " << o.saveResult << "\n";
            return 1;
        }
    }
    return r.completed > 0 && r.errors.empty() ? 0 : 1;
}

int runServeBench(const ServeBenchOptions& o)
{
    if (!g_serveLogLevel.empty()) spdlog::set_level(spdlog::level::from_str(g_serveLogLevel));
    if (o.datasetName == "multi-turn") return runMultiTurnBench(o);
    std::cout << "Traffic request rate: " << o.requestRate
              << "\nMaximum request concurrency: " << (o.maxConcurrency > 0 ? std::to_string(o.maxConcurrency) : "None")
              << "\n";
    ServeBenchmark benchmark(o);
    auto ran = benchmark.run();
    if (!ran) {
        std::cerr << "brook-bench: " << ran.error() << "\n";
        return 1;
    }
    const ServeBenchResult& r = *ran;
    if (!r.errors.empty()) std::cerr << "first error: " << r.errors.front() << "\n";

    std::printf("============ Serving Benchmark Result ============\n");
    printLine("Successful requests:", r.completed, 0);
    printLine("Failed requests:", double(r.errors.size()), 0);
    printLine("Benchmark duration (s):", r.duration);
    printLine("Total input tokens:", double(r.totalInputTokens), 0);
    printLine("Total generated tokens:", double(r.totalOutputTokens), 0);
    printLine("Request throughput (req/s):", r.requestThroughput);
    printLine("Output token throughput (tok/s):", r.outputThroughput);
    printLine("Peak output token throughput (tok/s):", r.peakOutputTokensPerSecond, 0);
    printLine("Peak concurrent requests:", r.peakConcurrentRequests, 0);
    printLine("Total Token throughput (tok/s):", r.totalTokenThroughput);
    const std::vector<std::tuple<const char*, const char*, const BenchLatency*>> metrics = {
        {"TTFT", "Time to First Token", &r.ttft},
        {"TPOT", "Time per Output Token (excl. 1st token)", &r.tpot},
        {"ITL", "Inter-token Latency", &r.itl},
        {"E2EL", "End-to-end Latency", &r.e2el}};
    for (const auto& [shortName, title, l] : metrics) {
        printTitle(title);
        printLine(("Mean " + std::string(shortName) + " (ms):").c_str(), l->mean);
        printLine(("Median " + std::string(shortName) + " (ms):").c_str(), l->median);
        printLine(("P99 " + std::string(shortName) + " (ms):").c_str(), l->p99);
    }
    std::printf("==================================================\n");
    if (!o.saveResult.empty()) {
        std::ofstream out(o.saveResult);
        out << r.toJson().dump(2, ' ', false, json::error_handler_t::replace) << "\n";
        if (!out) {
            std::cerr << "brook-bench: cannot write " << o.saveResult << "\n";
            return 1;
        }
    }
    return r.completed > 0 ? 0 : 1;
}

}  // namespace brook
