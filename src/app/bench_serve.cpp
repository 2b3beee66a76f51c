#include "app/bench_serve.h"

#include "engine/tokenizer.h"
#include "server/openai_client.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
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
    " the", " river", " mountain", " city", " light", " water", " time", " people", " world", " story", " small",
    " large", " green", " blue", " open", " quiet", " north", " south", " winter", " summer", " 山", " 水", " 城", " 人",
    " 天", " 风", " 花", " 月", " 书", " 路"};

struct Prompt {
    std::string text;
    int inputLen = 0;   // asked for
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
        if (tokenizer) {
            // vLLM's random dataset: random token ids decoded to text (special tokens left out).
            std::uniform_int_distribution<int32_t> token(0, tokenizer->vocabSize() - 1);
            std::vector<int32_t> ids;
            while (int(ids.size()) < p.inputLen) {
                const int32_t id = token(rng);
                if (!tokenizer->isSpecial(id)) ids.push_back(id);
            }
            p.text = tokenizer->decode(ids, true);
        } else {
            std::uniform_int_distribution<size_t> word(0, kWords.size() - 1);
            for (int t = 0; t < p.inputLen; ++t) p.text += kWords[word(rng)];
        }
        prompts.push_back(std::move(p));
    }
    return prompts;
}

std::string resolveModel(const OpenAiClient& client, const std::string& given)
{
    if (!given.empty()) return given;
    auto models = client.get("/v1/models");
    if (models.ok() && models.json.contains("data") && !models.json["data"].empty())
        return models.json["data"][0].value("id", std::string());
    return {};
}

void printLine(const char* name, double value, int decimals = 2)
{
    std::printf("%-40s %.*f\n", name, decimals, value);
}

// A section title centred in a 50-column rule, as vLLM prints them.
void printTitle(const std::string& title)
{
    const size_t pad = title.size() < 50 ? 50 - title.size() : 0;
    std::printf("%s%s%s\n", std::string(pad / 2, '-').c_str(), title.c_str(), std::string(pad - pad / 2, '-').c_str());
}

} // namespace

double percentileOf(std::vector<double> values, double percentile)
{
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const double rank = percentile / 100.0 * double(values.size() - 1);
    const size_t lo = size_t(rank);
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (rank - double(lo));
}

TimedRequest timedStream(const OpenAiClient& client, const std::string& endpoint, const json& body)
{
    TimedRequest r;
    auto result = client.stream(endpoint, body, [&](const StreamEvent& e) {
        if (e.data.contains("usage") && e.data["usage"].is_object()) {
            r.promptTokens = e.data["usage"].value("prompt_tokens", 0);
            r.outputTokens = e.data["usage"].value("completion_tokens", 0);
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
        if (!r.tokenTimes.empty()) r.itl.push_back(e.seconds - r.tokenTimes.back());
        r.tokenTimes.push_back(e.seconds);
        return true;
    });
    r.latency = result.seconds;
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

void addServeBenchFlags(CLI::App& app, ServeBenchOptions& o)
{
    app.add_option("--base-url", o.baseUrl, "server URL, e.g. http://127.0.0.1:8000 (default: --host/--port)");
    app.add_option("--host", o.host)->capture_default_str();
    app.add_option("--port", o.port)->capture_default_str();
    app.add_option("--endpoint", o.endpoint, "/v1/completions or /v1/chat/completions")->capture_default_str();
    app.add_option("--model", o.model, "model name (default: the server's first)");
    app.add_option("--api-key", o.apiKey, "bearer key (default: $OPENAI_API_KEY)");
    app.add_option("--dataset-name", o.datasetName, "random")->check(CLI::IsMember({"random"}))->capture_default_str();
    app.add_option("--num-prompts", o.numPrompts)->capture_default_str();
    app.add_option("--random-input-len", o.randomInputLen)->capture_default_str();
    app.add_option("--random-output-len", o.randomOutputLen)->capture_default_str();
    app.add_option("--random-range-ratio", o.randomRangeRatio, "lengths vary by this fraction")->capture_default_str();
    app.add_option("--request-rate", o.requestRate, "requests per second (default inf: all at once)");
    app.add_option("--burstiness", o.burstiness, "gamma shape of arrival gaps (1: Poisson)")->capture_default_str();
    app.add_option("--max-concurrency", o.maxConcurrency, "requests in flight at most (0: no limit)");
    app.add_option("--seed", o.seed)->capture_default_str();
    app.add_option("--tokenizer", o.tokenizer, "model folder whose tokenizer makes exact-length prompts");
    app.add_flag("--ignore-eos", o.ignoreEos, "generate exactly the output length");
    app.add_option("--temperature", o.temperature)->capture_default_str();
    app.add_option("--save-result", o.saveResult, "write the results as JSON to this file");
}

int runServeBench(const ServeBenchOptions& o)
{
    const std::string base = !o.baseUrl.empty() ? o.baseUrl : "http://" + o.host + ":" + std::to_string(o.port);
    std::string key = o.apiKey;
    if (key.empty())
        if (const char* env = std::getenv("OPENAI_API_KEY")) key = env;
    const OpenAiClient client(base, key, o.timeoutSeconds);
    const std::string model = resolveModel(client, o.model);
    if (model.empty()) {
        std::cerr << "brook-bench: cannot list models at " << base << "; is the server up? (give --model)\n";
        return 1;
    }
    std::unique_ptr<Tokenizer> tokenizer;
    if (!o.tokenizer.empty()) {
        auto loaded = Tokenizer::load(o.tokenizer);
        if (!loaded) {
            std::cerr << "brook-bench: " << loaded.error() << "\n";
            return 1;
        }
        tokenizer = std::move(loaded).value();
    }
    const std::vector<Prompt> prompts = randomPrompts(o, tokenizer.get());
    const bool chat = o.endpoint.find("chat") != std::string::npos;

    std::mt19937_64 arrivals(o.seed + 1);
    std::mutex mutex;
    std::condition_variable slotFree;
    int inFlight = 0, peakInFlight = 0;
    std::vector<TimedRequest> results(prompts.size());
    std::vector<std::thread> threads;
    std::cout << "Traffic request rate: " << o.requestRate << "\nMaximum request concurrency: "
              << (o.maxConcurrency > 0 ? std::to_string(o.maxConcurrency) : "None") << "\n";
    const auto start = BenchClock::now();
    auto nextArrival = start;
    for (size_t i = 0; i < prompts.size(); ++i) {
        if (std::isfinite(o.requestRate) && o.requestRate > 0) {
            // Gamma-distributed gaps with mean 1/rate (shape 1: exponential, i.e. Poisson arrivals).
            std::gamma_distribution<double> gap(o.burstiness, 1.0 / (o.requestRate * o.burstiness));
            std::this_thread::sleep_until(nextArrival);
            nextArrival += std::chrono::duration_cast<BenchClock::duration>(std::chrono::duration<double>(gap(arrivals)));
        }
        {
            std::unique_lock lock(mutex);
            slotFree.wait(lock, [&] { return o.maxConcurrency <= 0 || inFlight < o.maxConcurrency; });
            peakInFlight = std::max(peakInFlight, ++inFlight);
        }
        json body = {{"model", model}, {"max_tokens", prompts[i].outputLen}, {"temperature", o.temperature},
                     {"stream", true}, {"stream_options", {{"include_usage", true}}}};
        if (o.ignoreEos) body["ignore_eos"] = true;
        if (chat) body["messages"] = json::array({{{"role", "user"}, {"content", prompts[i].text}}});
        else body["prompt"] = prompts[i].text;
        threads.emplace_back([&, i, body] {
            results[i] = timedStream(client, o.endpoint, body);
            std::lock_guard lock(mutex);
            --inFlight;
            slotFree.notify_one();
        });
    }
    for (auto& t : threads) t.join();
    const double duration = std::chrono::duration<double>(BenchClock::now() - start).count();

    int completed = 0;
    long long inputTokens = 0, outputTokens = 0;
    std::vector<double> ttfts, tpots, itls, e2els;
    std::vector<int> inputLens, outputLens;
    std::vector<std::string> errors;
    std::map<long long, int> tokensPerSecond;  // for the peak output throughput
    for (size_t i = 0; i < results.size(); ++i) {
        const TimedRequest& r = results[i];
        if (!r.success) {
            errors.push_back(r.error);
            continue;
        }
        ++completed;
        inputTokens += r.promptTokens;
        outputTokens += r.outputTokens;
        inputLens.push_back(r.promptTokens);
        outputLens.push_back(r.outputTokens);
        ttfts.push_back(r.ttft * 1e3);
        e2els.push_back(r.latency * 1e3);
        if (r.outputTokens > 1) tpots.push_back((r.latency - r.ttft) * 1e3 / double(r.outputTokens - 1));
        for (double gap : r.itl) itls.push_back(gap * 1e3);
        for (double t : r.tokenTimes) ++tokensPerSecond[(long long)t];
    }
    int peakTokens = 0;
    for (const auto& [second, n] : tokensPerSecond) peakTokens = std::max(peakTokens, n);
    if (!errors.empty()) std::cerr << "first error: " << errors.front() << "\n";

    auto mean = [](const std::vector<double>& v) { return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); };
    std::printf("============ Serving Benchmark Result ============\n");
    printLine("Successful requests:", completed, 0);
    printLine("Failed requests:", double(errors.size()), 0);
    printLine("Benchmark duration (s):", duration);
    printLine("Total input tokens:", double(inputTokens), 0);
    printLine("Total generated tokens:", double(outputTokens), 0);
    printLine("Request throughput (req/s):", completed / duration);
    printLine("Output token throughput (tok/s):", double(outputTokens) / duration);
    printLine("Peak output token throughput (tok/s):", peakTokens, 0);
    printLine("Peak concurrent requests:", peakInFlight, 0);
    printLine("Total Token throughput (tok/s):", double(inputTokens + outputTokens) / duration);
    json saved = {{"date", std::time(nullptr)}, {"base_url", base}, {"endpoint", o.endpoint}, {"model_id", model},
                  {"num_prompts", o.numPrompts}, {"request_rate", std::isfinite(o.requestRate) ? json(o.requestRate) : json("inf")},
                  {"burstiness", o.burstiness}, {"max_concurrency", o.maxConcurrency > 0 ? json(o.maxConcurrency) : json(nullptr)},
                  {"duration", duration}, {"completed", completed}, {"failed", errors.size()},
                  {"total_input_tokens", inputTokens}, {"total_output_tokens", outputTokens},
                  {"request_throughput", completed / duration}, {"output_throughput", double(outputTokens) / duration},
                  {"total_token_throughput", double(inputTokens + outputTokens) / duration},
                  {"max_output_tokens_per_s", peakTokens}, {"max_concurrent_requests", peakInFlight},
                  {"input_lens", inputLens}, {"output_lens", outputLens}, {"ttfts", ttfts}, {"errors", errors}};
    const std::vector<std::tuple<const char*, const char*, const char*, const std::vector<double>*>> metrics = {
        {"ttft", "TTFT", "Time to First Token", &ttfts},
        {"tpot", "TPOT", "Time per Output Token (excl. 1st token)", &tpots},
        {"itl", "ITL", "Inter-token Latency", &itls},
        {"e2el", "E2EL", "End-to-end Latency", &e2els}};
    for (const auto& [key, shortName, title, values] : metrics) {
        printTitle(title);
        const double m = mean(*values), med = percentileOf(*values, 50), p99 = percentileOf(*values, 99);
        printLine(("Mean " + std::string(shortName) + " (ms):").c_str(), m);
        printLine(("Median " + std::string(shortName) + " (ms):").c_str(), med);
        printLine(("P99 " + std::string(shortName) + " (ms):").c_str(), p99);
        saved["mean_" + std::string(key) + "_ms"] = m;
        saved["median_" + std::string(key) + "_ms"] = med;
        saved["p99_" + std::string(key) + "_ms"] = p99;
    }
    std::printf("==================================================\n");
    if (!o.saveResult.empty()) {
        std::ofstream out(o.saveResult);
        out << saved.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
        if (!out) {
            std::cerr << "brook-bench: cannot write " << o.saveResult << "\n";
            return 1;
        }
    }
    return completed > 0 ? 0 : 1;
}

} // namespace brook
