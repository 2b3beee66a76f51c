// ServeBenchmark: the load generator behind `brook-bench serve` and the app's load generator (one
// code path, so their numbers agree). `vllm bench serve`'s random dataset and report: seeded input
// and output lengths, Poisson (or gamma, with burstiness) arrivals at request-rate, at most
// max-concurrency requests in flight, optionally a duration after which no new request is sent;
// TTFT / TPOT / ITL / E2EL mean, median and p99. It talks HTTP to any OpenAI-compatible server.
// run() blocks (call it from a worker thread in a GUI); cancel() and progress are thread-safe.
#pragma once

#include "engine/result.h"
#include "loadgen/request_threads.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace brook {

class OpenAiClient;
class Tokenizer;

struct ServeBenchOptions {
    std::string baseUrl;  // empty: http://host:port
    std::string host = "127.0.0.1";
    int port = 8000;
    std::string endpoint = "/v1/completions";  // or /v1/chat/completions
    std::string model;                         // empty: the first model GET /v1/models lists
    std::string apiKey;                        // empty: $OPENAI_API_KEY
    std::string datasetName = "random";        // or "multi-turn" (multi_turn_benchmark.h)
    int numPrompts = 100;
    int randomInputLen = 1024;
    int randomOutputLen = 128;
    double randomRangeRatio = 0.0;                                 // lengths uniform in [len * (1 - r), len * (1 + r)]
    double requestRate = std::numeric_limits<double>::infinity();  // requests/s; inf: all at once
    double burstiness = 1.0;                                       // gamma shape of the arrival gaps; 1 = Poisson
    int maxConcurrency = 0;                                        // 0: no limit ("concurrent users")
    int multiTurnTurns = 8;                                        // multi-turn: user turns per conversation
    int multiTurnSystemLen = 1000;  // multi-turn: system prompt length, shared by every conversation
    double durationSeconds = 0;     // > 0: send no new request after this long
    uint64_t seed = 0;
    std::string tokenizer;  // a model folder: prompts of exact token lengths
    bool ignoreEos = false;
    double temperature = 0.0;
    std::string saveResult;  // JSON file (brook-bench only)
    double timeoutSeconds = 600;
    std::string resolvedBaseUrl() const;
};

// One streamed request as a benchmark sees it.
struct TimedRequest {
    bool success = false;
    std::string error;
    int promptTokens = 0;  // from the usage chunk (the server's count)
    int outputTokens = 0;
    int cachedTokens = 0;  // usage.prompt_tokens_details.cached_tokens, when the server reports it
    std::string text;      // the streamed answer
    bool sawFirstChunk = false;
    double ttft = 0;                 // seconds from sending to the first chunk with choices
    double latency = 0;              // end to end
    std::vector<double> itl;         // gaps between token chunks
    std::vector<double> tokenTimes;  // seconds since sending, one per token chunk
};

// Sends one streaming request and times its text chunks; hangs up early once *cancel is true.
TimedRequest timedStream(const OpenAiClient& client, const std::string& endpoint, const nlohmann::json& body,
                         const std::atomic<bool>* cancel = nullptr);

// Random prompt text of about `length` tokens: vLLM's random dataset (random token ids decoded,
// special tokens left out) with a tokenizer, else words that are mostly one ERNIE token each.
std::string randomPromptText(std::mt19937_64& rng, int length, const Tokenizer* tokenizer);

// A percentile (linear interpolation, as numpy's default) of a sample; 0 when empty.
double percentileOf(std::vector<double> values, double percentile);

struct BenchLatency {
    double mean = 0, median = 0, p99 = 0;  // milliseconds
};

// Mean, median and p99 of a sample (all 0 when empty).
BenchLatency summarizeLatency(const std::vector<double>& values);

// `given`, or else the first model the server lists at /v1/models (empty when it lists none).
std::string resolveServedModel(const OpenAiClient& client, const std::string& given);

struct ServeBenchProgress {
    int total = 0;  // requests the run may send (num-prompts)
    int sent = 0;
    int finished = 0;  // completed + failed
    int failed = 0;
    int inFlight = 0;
    double elapsedSeconds = 0;
};

struct ServeBenchResult {
    std::string baseUrl, endpoint, model;
    int numPrompts = 0;
    double requestRate = 0, burstiness = 1;
    int maxConcurrency = 0;
    int sent = 0;  // < numPrompts when a duration or cancel cut the run short
    bool cancelled = false;
    double duration = 0;
    int completed = 0;
    std::vector<std::string> errors;
    long long totalInputTokens = 0, totalOutputTokens = 0;
    double requestThroughput = 0, outputThroughput = 0, totalTokenThroughput = 0;
    int peakOutputTokensPerSecond = 0, peakConcurrentRequests = 0;
    std::vector<int> inputLens, outputLens;
    std::vector<double> ttftsMs;
    BenchLatency ttft, tpot, itl, e2el;
    // `vllm bench serve --save-result`'s keys.
    nlohmann::json toJson() const;
};

class ServeBenchmark {
public:
    using ProgressCallback = std::function<void(const ServeBenchProgress&)>;

    explicit ServeBenchmark(ServeBenchOptions options);

    // Blocks until every sent request has ended. The error: no model to talk to, or a tokenizer
    // that does not load. `onProgress` runs on the benchmark's threads after each send and each
    // finish; it must return quickly.
    Result<ServeBenchResult> run(const ProgressCallback& onProgress = {});
    // Thread-safe: sends nothing more and hangs up on the requests in flight.
    void cancel();
    bool cancelled() const { return m_cancel.load(); }
    const ServeBenchOptions& options() const { return m_options; }
    // Tests: how the request threads are made (RequestThreads' default: std::thread).
    void setThreadSpawn(RequestThreads::Spawn spawn) { m_spawn = std::move(spawn); }

private:
    ServeBenchOptions m_options;
    RequestThreads::Spawn m_spawn;
    std::atomic<bool> m_cancel{false};
    std::mutex m_mutex;
    std::condition_variable m_wake;
};

}  // namespace brook
