// MultiTurnChatBenchmark: `brook-bench serve --dataset-name multi-turn`. Conversations of
// multiTurnTurns user turns, each request resending the whole history: one system prompt of
// multiTurnSystemLen tokens shared by every conversation, then per turn a random user message of
// random-input-len tokens and the streamed answer (random-output-len tokens). At most
// max-concurrency conversations run at once; within one, turn k+1 is sent when turn k ends.
// What it is for: time to first token by turn, which prefix caching keeps flat as the history
// grows (without it, every turn prefills the whole conversation again), and the server's prefix
// cache hit rate over the run (from /metrics).
#pragma once

#include "loadgen/serve_benchmark.h"

#include <optional>
#include <vector>

namespace brook {

struct MultiTurnTurnStats {
    int completed = 0;
    BenchLatency ttft;  // milliseconds
    double meanPromptTokens = 0;
    double meanCachedTokens = 0;  // usage.prompt_tokens_details.cached_tokens
};

struct MultiTurnResult {
    std::string baseUrl, model;
    int conversations = 0, turns = 0, maxConcurrency = 0;
    int completed = 0;  // requests
    std::vector<std::string> errors;
    double duration = 0;
    long long totalInputTokens = 0, totalOutputTokens = 0;
    double outputThroughput = 0;
    BenchLatency ttft, tpot;
    std::vector<MultiTurnTurnStats> byTurn;  // index 0: turn 1
    // The server's vllm:prefix_cache_queries / _hits over the run; absent when it has none.
    std::optional<double> prefixCacheQueries, prefixCacheHits;
    nlohmann::json toJson() const;
};

class MultiTurnChatBenchmark {
public:
    explicit MultiTurnChatBenchmark(ServeBenchOptions options);
    // Blocks until every conversation has ended. The error: no model, or a tokenizer that does not load.
    Result<MultiTurnResult> run();

private:
    ServeBenchOptions m_options;
};

}  // namespace brook
