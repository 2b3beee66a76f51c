// brook-bench serve / baseline: online benchmarks over HTTP against any OpenAI-compatible server
// (brook-serve, vLLM, ...), so numbers compare across servers on the same machine.
//   serve:    `vllm bench serve`'s random dataset and report: seeded input/output lengths,
//             --request-rate (Poisson, or gamma with --burstiness), --max-concurrency,
//             TTFT / TPOT / ITL / E2EL mean, median and p99; --save-result FILE.json.
//   baseline: a daily check: three standard requests (a short Chinese question, 64 tokens),
//             memory in use and queue length, appended as one JSON line to a history file and
//             compared with the previous line.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace brook {

class OpenAiClient;

struct ServeBenchOptions {
    std::string baseUrl;                  // empty: http://host:port
    std::string host = "127.0.0.1";
    int port = 8000;
    std::string endpoint = "/v1/completions";  // or /v1/chat/completions
    std::string model;                    // empty: the first model GET /v1/models lists
    std::string apiKey;                   // empty: $OPENAI_API_KEY
    std::string datasetName = "random";
    int numPrompts = 100;
    int randomInputLen = 1024;
    int randomOutputLen = 128;
    double randomRangeRatio = 0.0;        // lengths uniform in [len * (1 - r), len * (1 + r)]
    double requestRate = std::numeric_limits<double>::infinity();  // requests/s; inf: all at once
    double burstiness = 1.0;              // gamma shape of the arrival gaps; 1 = Poisson
    int maxConcurrency = 0;               // 0: no limit
    uint64_t seed = 0;
    std::string tokenizer;                // a model folder: prompts of exact token lengths
    bool ignoreEos = false;
    double temperature = 0.0;
    std::string saveResult;               // JSON file
    double timeoutSeconds = 600;
};

struct BaselineOptions {
    std::string baseUrl = "http://127.0.0.1:8000";
    std::string model;
    std::string apiKey;
    std::string historyFile = "baseline-history.jsonl";
    std::string label;                    // free text stored with the line (a commit, a machine)
    int maxTokens = 64;
    int repeats = 3;
};

void addServeBenchFlags(CLI::App& app, ServeBenchOptions& options);
void addBaselineFlags(CLI::App& app, BaselineOptions& options);
int runServeBench(const ServeBenchOptions& options);
int runBaseline(const BaselineOptions& options);

// One streamed request as a benchmark sees it.
struct TimedRequest {
    bool success = false;
    std::string error;
    int promptTokens = 0;     // from the usage chunk (the server's count)
    int outputTokens = 0;
    bool sawFirstChunk = false;
    double ttft = 0;          // seconds from sending to the first chunk with choices
    double latency = 0;       // end to end
    std::vector<double> itl;  // gaps between token chunks
    std::vector<double> tokenTimes;  // seconds since sending, one per token chunk
};

// Sends one streaming request and times its text chunks.
TimedRequest timedStream(const OpenAiClient& client, const std::string& endpoint, const nlohmann::json& body);

// A percentile (linear interpolation, as numpy's default) of a sample; 0 when empty.
double percentileOf(std::vector<double> values, double percentile);

} // namespace brook
