#include "loadgen/serve_benchmark.h"

#include "engine/tokenizer.h"
#include "loadgen/openai_client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <numeric>
#include <random>
#include <thread>
#include <tuple>

namespace brook {

using nlohmann::json;
using BenchClock = std::chrono::steady_clock;

namespace {

// Words for prompts when no tokenizer is given: most are one ERNIE token each.
const std::vector<std::string> kWords = {
    " the",   " river", " mountain", " city", " light", " water", " time",  " people", " world",  " story",
    " small", " large", " green",    " blue", " open",  " quiet", " north", " south",  " winter", " summer",
    " 山",    " 水",    " 城",       " 人",   " 天",    " 风",    " 花",    " 月",     " 书",     " 路"};

struct Prompt {
    std::string text;
    int inputLen = 0;  // asked for
    int outputLen = 0;
};

std::vector<Prompt> randomPrompts(const ServeBenchOptions& o, const Tokenizer* tokenizer)
{
    std::mt19937_64 rng(o.seed);
    auto lengthIn = [&](int len) {
        const int lo = std::max(1, int(double(len) * (1.0 - o.randomRangeRatio)));
        const int hi = std::max(lo, int(double(len) * (1.0 + o.randomRangeRatio)));
        return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    std::vector<Prompt> prompts;
    for (int i = 0; i < o.numPrompts; ++i) {
        Prompt p;
        p.inputLen = lengthIn(o.randomInputLen);
        p.outputLen = lengthIn(o.randomOutputLen);
        p.text = randomPromptText(rng, p.inputLen, tokenizer);
        prompts.push_back(std::move(p));
    }
    return prompts;
}

}  // namespace

std::string resolveServedModel(const OpenAiClient& client, const std::string& given)
{
    if (!given.empty()) return given;
    auto models = client.get("/v1/models");
    if (models.ok() && models.json.contains("data") && !models.json["data"].empty())
        return models.json["data"][0].value("id", std::string());
    return {};
}

BenchLatency summarizeLatency(const std::vector<double>& v)
{
    BenchLatency l;
    if (v.empty()) return l;
    l.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
    l.median = percentileOf(v, 50);
    l.p99 = percentileOf(v, 99);
    return l;
}

std::string randomPromptText(std::mt19937_64& rng, int length, const Tokenizer* tokenizer)
{
    std::string text;
    if (tokenizer) {
        // vLLM's random dataset: random token ids decoded to text (special tokens left out).
        std::uniform_int_distribution<int32_t> token(0, tokenizer->vocabSize() - 1);
        std::vector<int32_t> ids;
        while (int(ids.size()) < length) {
            const int32_t id = token(rng);
            if (!tokenizer->isSpecial(id)) ids.push_back(id);
        }
        return tokenizer->decode(ids, true);
    }
    std::uniform_int_distribution<size_t> word(0, kWords.size() - 1);
    for (int t = 0; t < length; ++t) text += kWords[word(rng)];
    return text;
}

std::string ServeBenchOptions::resolvedBaseUrl() const
{
    return !baseUrl.empty() ? baseUrl : "http://" + host + ":" + std::to_string(port);
}

double percentileOf(std::vector<double> values, double percentile)
{
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const double rank = percentile / 100.0 * double(values.size() - 1);
    const size_t lo = size_t(rank);
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (rank - double(lo));
}

TimedRequest timedStream(const OpenAiClient& client, const std::string& endpoint, const json& body,
                         const std::atomic<bool>* cancel)
{
    TimedRequest r;
    auto result = client.stream(endpoint, body, [&](const StreamEvent& e) {
        if (cancel && cancel->load()) return false;
        if (e.data.contains("usage") && e.data["usage"].is_object()) {
            r.promptTokens = e.data["usage"].value("prompt_tokens", 0);
            r.outputTokens = e.data["usage"].value("completion_tokens", 0);
            const json& details = e.data["usage"].value("prompt_tokens_details", json());
            if (details.is_object()) r.cachedTokens = details.value("cached_tokens", 0);
        }
        if (!e.data.contains("choices") || !e.data["choices"].is_array() || e.data["choices"].empty()) return true;
        // As vllm bench serve: the first chunk with choices is the first token; every chunk that
        // carries a token (text, or a chat delta without the role) is one inter-token gap.
        const auto& c = e.data["choices"][0];
        if (!r.sawFirstChunk) {
            r.sawFirstChunk = true;
            r.ttft = e.seconds;
        }
        const bool carriesToken = c.contains("text") || (c.contains("delta") && c["delta"].contains("content") &&
                                                         !c["delta"].contains("role"));
        if (!carriesToken) return true;
        const json& piece = c.contains("text") ? c["text"] : c["delta"]["content"];
        if (piece.is_string()) r.text += piece.get<std::string>();
        if (!r.tokenTimes.empty()) r.itl.push_back(e.seconds - r.tokenTimes.back());
        r.tokenTimes.push_back(e.seconds);
        return true;
    });
    r.latency = result.seconds;
    if (cancel && cancel->load() && !result.sawDone) {
        r.error = "cancelled";
        return r;
    }
    if (!result.ok() || !result.sawDone) {
        r.error = !result.transportError.empty() ? result.transportError
                                                 : "HTTP " + std::to_string(result.status) + " " + result.errorBody;
        return r;
    }
    for (const StreamEvent& e : result.events)
        if (e.data.contains("error")) r.error = e.data["error"].value("message", std::string("error event"));
    if (r.outputTokens == 0) r.outputTokens = int(r.tokenTimes.size());
    r.success = r.error.empty();
    return r;
}

ServeBenchmark::ServeBenchmark(ServeBenchOptions options) : m_options(std::move(options)) {}

void ServeBenchmark::cancel()
{
    {
        std::lock_guard lock(m_mutex);
        m_cancel = true;
    }
    m_wake.notify_all();
}

Result<ServeBenchResult> ServeBenchmark::run(const ProgressCallback& onProgress)
{
    const ServeBenchOptions& o = m_options;
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
    const std::vector<Prompt> prompts = randomPrompts(o, tokenizer.get());
    const bool chat = o.endpoint.find("chat") != std::string::npos;

    std::mt19937_64 arrivals(o.seed + 1);
    ServeBenchProgress progress;
    progress.total = int(prompts.size());
    int peakInFlight = 0;
    std::vector<TimedRequest> results(prompts.size());
    std::vector<double> sentAt(prompts.size(), 0.0);  // seconds since the start: token times are per request
    RequestThreads threads(m_spawn);
    const auto start = BenchClock::now();
    const auto deadline =
        o.durationSeconds > 0
            ? start + std::chrono::duration_cast<BenchClock::duration>(std::chrono::duration<double>(o.durationSeconds))
            : BenchClock::time_point::max();
    auto report = [&](ServeBenchProgress p) {
        p.elapsedSeconds = std::chrono::duration<double>(BenchClock::now() - start).count();
        if (onProgress) onProgress(p);
    };
    auto nextArrival = start;
    for (size_t i = 0; i < prompts.size(); ++i) {
        {
            std::unique_lock lock(m_mutex);
            if (std::isfinite(o.requestRate) && o.requestRate > 0) {
                // Gamma-distributed gaps with mean 1/rate (shape 1: exponential, i.e. Poisson arrivals).
                std::gamma_distribution<double> gap(o.burstiness, 1.0 / (o.requestRate * o.burstiness));
                m_wake.wait_until(lock, std::min(nextArrival, deadline), [&] { return m_cancel.load(); });
                nextArrival +=
                    std::chrono::duration_cast<BenchClock::duration>(std::chrono::duration<double>(gap(arrivals)));
            }
            m_wake.wait(lock,
                        [&] { return m_cancel || o.maxConcurrency <= 0 || progress.inFlight < o.maxConcurrency; });
            if (m_cancel || BenchClock::now() >= deadline) break;
            peakInFlight = std::max(peakInFlight, ++progress.inFlight);
            ++progress.sent;
        }
        report([&] {
            std::lock_guard lock(m_mutex);
            return progress;
        }());
        json body = {{"model", model},
                     {"max_tokens", prompts[i].outputLen},
                     {"temperature", o.temperature},
                     {"stream", true},
                     {"stream_options", {{"include_usage", true}}}};
        if (o.ignoreEos) body["ignore_eos"] = true;
        if (chat) body["messages"] = json::array({{{"role", "user"}, {"content", prompts[i].text}}});
        else body["prompt"] = prompts[i].text;
        sentAt[i] = std::chrono::duration<double>(BenchClock::now() - start).count();
        auto finish = [&, i] {
            ServeBenchProgress now;
            {
                std::lock_guard lock(m_mutex);
                --progress.inFlight;
                ++progress.finished;
                if (!results[i].success) ++progress.failed;
                now = progress;
            }
            m_wake.notify_all();
            report(now);
        };
        const auto unstarted = threads.start([&, i, body, finish] {
            results[i] = timedStream(client, o.endpoint, body, &m_cancel);
            finish();
        });
        if (unstarted) {  // out of threads: this request fails, the run goes on
            results[i].error = *unstarted;
            finish();
        }
    }
    threads.joinAll();

    ServeBenchResult r;
    r.duration = std::chrono::duration<double>(BenchClock::now() - start).count();
    r.baseUrl = base;
    r.endpoint = o.endpoint;
    r.model = model;
    r.numPrompts = o.numPrompts;
    r.requestRate = o.requestRate;
    r.burstiness = o.burstiness;
    r.maxConcurrency = o.maxConcurrency;
    r.sent = progress.sent;
    r.cancelled = m_cancel.load();
    r.peakConcurrentRequests = peakInFlight;
    std::vector<double> tpots, itls, e2els;
    std::map<long long, int> tokensPerSecond;  // for the peak output throughput
    for (size_t i = 0; i < size_t(progress.sent); ++i) {
        const TimedRequest& t = results[i];
        if (!t.success) {
            r.errors.push_back(t.error);
            continue;
        }
        ++r.completed;
        r.totalInputTokens += t.promptTokens;
        r.totalOutputTokens += t.outputTokens;
        r.inputLens.push_back(t.promptTokens);
        r.outputLens.push_back(t.outputTokens);
        r.ttftsMs.push_back(t.ttft * 1e3);
        e2els.push_back(t.latency * 1e3);
        if (t.outputTokens > 1) tpots.push_back((t.latency - t.ttft) * 1e3 / double(t.outputTokens - 1));
        for (double gap : t.itl) itls.push_back(gap * 1e3);
        for (double s : t.tokenTimes) ++tokensPerSecond[(long long)(sentAt[i] + s)];
    }
    for (const auto& [second, n] : tokensPerSecond)
        r.peakOutputTokensPerSecond = std::max(r.peakOutputTokensPerSecond, n);
    const double d = r.duration > 0 ? r.duration : 1.0;
    r.requestThroughput = r.completed / d;
    r.outputThroughput = double(r.totalOutputTokens) / d;
    r.totalTokenThroughput = double(r.totalInputTokens + r.totalOutputTokens) / d;
    r.ttft = summarizeLatency(r.ttftsMs);
    r.tpot = summarizeLatency(tpots);
    r.itl = summarizeLatency(itls);
    r.e2el = summarizeLatency(e2els);
    return r;
}

json ServeBenchResult::toJson() const
{
    json saved = {{"date", std::time(nullptr)},
                  {"base_url", baseUrl},
                  {"endpoint", endpoint},
                  {"model_id", model},
                  {"num_prompts", numPrompts},
                  {"request_rate", std::isfinite(requestRate) ? json(requestRate) : json("inf")},
                  {"burstiness", burstiness},
                  {"max_concurrency", maxConcurrency > 0 ? json(maxConcurrency) : json(nullptr)},
                  {"duration", duration},
                  {"completed", completed},
                  {"failed", errors.size()},
                  {"total_input_tokens", totalInputTokens},
                  {"total_output_tokens", totalOutputTokens},
                  {"request_throughput", requestThroughput},
                  {"output_throughput", outputThroughput},
                  {"total_token_throughput", totalTokenThroughput},
                  {"max_output_tokens_per_s", peakOutputTokensPerSecond},
                  {"max_concurrent_requests", peakConcurrentRequests},
                  {"input_lens", inputLens},
                  {"output_lens", outputLens},
                  {"ttfts", ttftsMs},
                  {"errors", errors}};
    const std::vector<std::pair<const char*, const BenchLatency*>> metrics = {
        {"ttft", &ttft}, {"tpot", &tpot}, {"itl", &itl}, {"e2el", &e2el}};
    for (const auto& [key, l] : metrics) {
        saved["mean_" + std::string(key) + "_ms"] = l->mean;
        saved["median_" + std::string(key) + "_ms"] = l->median;
        saved["p99_" + std::string(key) + "_ms"] = l->p99;
    }
    return saved;
}

}  // namespace brook
