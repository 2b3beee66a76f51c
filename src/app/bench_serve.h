// brook-bench serve / baseline: online benchmarks over HTTP against any OpenAI-compatible server
// (brook-serve, vLLM, ...), so numbers compare across servers on the same machine.
//   serve:    `vllm bench serve`'s random dataset and report (the load generator itself is
//             src/loadgen/serve_benchmark.h, shared with the desktop app); --save-result FILE.json.
//             --dataset-name multi-turn: chat conversations that resend their history, time to
//             first token by turn (src/loadgen/multi_turn_benchmark.h).
//   baseline: a daily check: three standard requests (a short Chinese question, 64 tokens),
//             memory in use and queue length, appended as one JSON line to a history file and
//             compared with the previous line.
#pragma once

#include "loadgen/serve_benchmark.h"  // ServeBenchOptions, ServeBenchmark, timedStream, percentileOf

#include <string>

namespace CLI {
class App;
}

namespace brook {

struct BaselineOptions {
    std::string baseUrl = "http://127.0.0.1:8000";
    std::string model;
    std::string apiKey;
    std::string historyFile = "baseline-history.jsonl";
    std::string label;  // free text stored with the line (a commit, a machine)
    int maxTokens = 64;
    int repeats = 3;
};

void addServeBenchFlags(CLI::App& app, ServeBenchOptions& options);
void addBaselineFlags(CLI::App& app, BaselineOptions& options);
int runServeBench(const ServeBenchOptions& options);
int runBaseline(const BaselineOptions& options);

}  // namespace brook
