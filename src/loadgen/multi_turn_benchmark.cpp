#include "loadgen/multi_turn_benchmark.h"

#include "engine/tokenizer.h"
#include "loadgen/openai_client.h"
#include "loadgen/prometheus_text.h"
#include "loadgen/request_threads.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <thread>

namespace brook {

using nlohmann::json;
using BenchClock = std::chrono::steady_clock;

namespace {

std::optional<double> metric(const OpenAiClient& client, const char* name)
{
    const auto page = client.get("/metrics");
    if (!page.ok()) return std::nullopt;
    auto parsed = PrometheusText::parse(page.body);
    if (!parsed) return std::nullopt;
    return parsed->sum(name);
}

struct TurnRecord {
    TimedRequest request;
    int turn = 0;
};

}  // namespace

MultiTurnChatBenchmark::MultiTurnChatBenchmark(ServeBenchOptions options) : m_options(std::move(options)) {}

Result<MultiTurnResult> MultiTurnChatBenchmark::run()
{
    const ServeBenchOptions& o = m_options;
    if (o.multiTurnTurns < 1) return makeError("--multi-turn-turns must be at least 1");
    if (o.multiTurnSystemLen < 0) return makeError("--multi-turn-system-len must not be negative");
    if (o.numPrompts < 1) return makeError("--num-prompts (conversations) must be at least 1");
    const std::string base = o.resolvedBaseUrl();
    std::string key = o.apiKey;
    if (key.empty())
        if (const char* env = std::getenv("OPENAI_API_KEY")) key = env;
    const OpenAiClient client(base, key, o.timeoutSeconds);
    const std::string model = resolveServedModel(client, o.model);
    if (model.empty()) return makeError("cannot list models at " + base + "; is the server up? (give --model)");
    std::unique_ptr<Tokenizer> tokenizer;
    if (!o.tokenizer.empty()) {
        auto loaded = Tokenizer::load(o.tokenizer);
        if (!loaded) return loaded.failure();
        tokenizer = std::move(loaded).value();
    }
    // Every message is drawn before the clock starts, from the seed alone: the same run twice
    // (with and without prefix caching) sends the same questions.
    std::mt19937_64 rng(o.seed);
    const std::string system = randomPromptText(rng, o.multiTurnSystemLen, tokenizer.get());
    std::vector<std::vector<std::string>> questions(size_t(o.numPrompts));
    for (auto& conversation : questions)
        for (int t = 0; t < o.multiTurnTurns; ++t)
            conversation.push_back(randomPromptText(rng, o.randomInputLen, tokenizer.get()));

    const std::optional<double> queriesBefore = metric(client, "vllm:prefix_cache_queries_total");
    const std::optional<double> hitsBefore = metric(client, "vllm:prefix_cache_hits_total");
    std::mutex mutex;
    std::vector<TurnRecord> records;
    std::atomic<int> nextConversation{0};
    const auto converse = [&] {
        for (int c; (c = nextConversation++) < o.numPrompts;) {
            json messages = json::array();
            if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
            for (int t = 0; t < o.multiTurnTurns; ++t) {
                messages.push_back({{"role", "user"}, {"content", questions[size_t(c)][size_t(t)]}});
                json body = {{"model", model},
                             {"messages", messages},
                             {"max_tokens", o.randomOutputLen},
                             {"temperature", o.temperature},
                             {"stream", true},
                             {"stream_options", {{"include_usage", true}}}};
                if (o.ignoreEos) body["ignore_eos"] = true;
                TurnRecord record{timedStream(client, "/v1/chat/completions", body), t};
                const bool ok = record.request.success;
                messages.push_back({{"role", "assistant"}, {"content", record.request.text}});
                {
                    std::lock_guard lock(mutex);
                    records.push_back(std::move(record));
                }
                if (!ok) break;  // the rest of a broken conversation would measure nothing
            }
        }
    };
    const int workers = std::min(o.numPrompts, o.maxConcurrency > 0 ? o.maxConcurrency : o.numPrompts);
    const auto start = BenchClock::now();
    // The conversations are shared out: fewer workers (out of threads) only run them with less
    // concurrency, which the report says. None at all fails the run.
    RequestThreads threads;
    int started = 0;
    std::string unstarted;
    for (int w = 0; w < workers; ++w) {
        if (auto failure = threads.start(converse)) unstarted = *failure;
        else ++started;
    }
    if (started == 0) converse();  // on this thread, one conversation at a time
    threads.joinAll();
    if (started < workers)
        spdlog::warn("multi-turn benchmark: {} of {} workers ran ({})", std::max(started, 1), workers, unstarted);

    MultiTurnResult r;
    r.duration = std::chrono::duration<double>(BenchClock::now() - start).count();
    r.baseUrl = base;
    r.model = model;
    r.conversations = o.numPrompts;
    r.turns = o.multiTurnTurns;
    r.maxConcurrency = std::max(started, 1);
    std::vector<std::vector<double>> ttftByTurn(size_t(o.multiTurnTurns));
    std::vector<double> ttfts, tpots;
    r.byTurn.resize(size_t(o.multiTurnTurns));
    for (const TurnRecord& record : records) {
        const TimedRequest& t = record.request;
        if (!t.success) {
            r.errors.push_back(t.error);
            continue;
        }
        ++r.completed;
        r.totalInputTokens += t.promptTokens;
        r.totalOutputTokens += t.outputTokens;
        ttfts.push_back(t.ttft * 1e3);
        ttftByTurn[size_t(record.turn)].push_back(t.ttft * 1e3);
        if (t.outputTokens > 1) tpots.push_back((t.latency - t.ttft) * 1e3 / double(t.outputTokens - 1));
        MultiTurnTurnStats& turn = r.byTurn[size_t(record.turn)];
        ++turn.completed;
        turn.meanPromptTokens += t.promptTokens;
        turn.meanCachedTokens += t.cachedTokens;
    }
    for (size_t t = 0; t < r.byTurn.size(); ++t) {
        MultiTurnTurnStats& turn = r.byTurn[t];
        turn.ttft = summarizeLatency(ttftByTurn[t]);
        if (turn.completed > 0) {
            turn.meanPromptTokens /= turn.completed;
            turn.meanCachedTokens /= turn.completed;
        }
    }
    r.ttft = summarizeLatency(ttfts);
    r.tpot = summarizeLatency(tpots);
    r.outputThroughput = double(r.totalOutputTokens) / std::max(r.duration, 1e-9);
    const std::optional<double> queriesAfter = metric(client, "vllm:prefix_cache_queries_total");
    const std::optional<double> hitsAfter = metric(client, "vllm:prefix_cache_hits_total");
    if (queriesBefore && queriesAfter && hitsBefore && hitsAfter) {
        r.prefixCacheQueries = *queriesAfter - *queriesBefore;
        r.prefixCacheHits = *hitsAfter - *hitsBefore;
    }
    return r;
}

json MultiTurnResult::toJson() const
{
    json turns = json::array();
    for (size_t t = 0; t < byTurn.size(); ++t)
        turns.push_back({{"turn", t + 1},
                         {"completed", byTurn[t].completed},
                         {"mean_ttft_ms", byTurn[t].ttft.mean},
                         {"median_ttft_ms", byTurn[t].ttft.median},
                         {"p99_ttft_ms", byTurn[t].ttft.p99},
                         {"mean_prompt_tokens", byTurn[t].meanPromptTokens},
                         {"mean_cached_tokens", byTurn[t].meanCachedTokens}});
    return {{"dataset_name", "multi-turn"},
            {"base_url", baseUrl},
            {"model_id", model},
            {"conversations", conversations},
            {"turns", this->turns},
            {"max_concurrency", maxConcurrency},
            {"completed", completed},
            {"failed", errors.size()},
            {"duration", duration},
            {"total_input_tokens", totalInputTokens},
            {"total_output_tokens", totalOutputTokens},
            {"output_throughput", outputThroughput},
            {"mean_ttft_ms", ttft.mean},
            {"median_ttft_ms", ttft.median},
            {"p99_ttft_ms", ttft.p99},
            {"mean_tpot_ms", tpot.mean},
            {"prefix_cache_queries", prefixCacheQueries ? json(*prefixCacheQueries) : json(nullptr)},
            {"prefix_cache_hits", prefixCacheHits ? json(*prefixCacheHits) : json(nullptr)},
            {"by_turn", turns},
            {"errors", errors}};
}

}  // namespace brook
