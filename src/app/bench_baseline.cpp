// brook-bench baseline: the same three requests every day against a running server, so a slow-down
// shows up as a change from yesterday's line. Each run appends one JSON line to the history file.
#include "app/bench_serve.h"

#include "loadgen/openai_client.h"
#include "platform/process_info.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

namespace brook {

using nlohmann::json;

namespace {

// The standard question: short, Chinese (ERNIE's home ground), answered with exactly 64 tokens.
const char* kQuestion = "请用三句话介绍一下长江。";

// A metric's value from Prometheus text (summed over its series); NaN when absent.
double metricValue(const std::string& text, const std::string& name)
{
    std::istringstream in(text);
    std::string line;
    double sum = 0;
    bool found = false;
    while (std::getline(in, line)) {
        if (line.rfind(name, 0) != 0) continue;
        const char next = line.size() > name.size() ? line[name.size()] : ' ';
        if (next != '{' && next != ' ') continue;
        const size_t space = line.rfind(' ');
        try {
            sum += std::stod(line.substr(space + 1));
            found = true;
        } catch (const std::exception&) {}
    }
    return found ? sum : std::nan("");
}

// GPU memory in use as nvidia-smi reports it (MiB, summed over GPUs); NaN without nvidia-smi.
double nvidiaSmiUsedMiB()
{
    const std::string command =
        std::string("nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits ") + nullDeviceRedirect();
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return std::nan("");
    double total = 0;
    bool any = false;
    char buffer[128];
    while (fgets(buffer, sizeof buffer, pipe)) {
        try {
            total += std::stod(buffer);
            any = true;
        } catch (const std::exception&) {}
    }
    const int status = pclose(pipe);
    return any && status == 0 ? total : std::nan("");
}

json numberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string isoTimeUtc()
{
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return text;
}

}  // namespace

void addBaselineFlags(CLI::App& app, BaselineOptions& o)
{
    app.add_option("--base-url", o.baseUrl, "server URL")->capture_default_str();
    app.add_option("--model", o.model, "model name (default: the server's first)");
    app.add_option("--api-key", o.apiKey, "bearer key (default: $OPENAI_API_KEY)");
    app.add_option("--history", o.historyFile, "JSON-lines file the result is appended to")->capture_default_str();
    app.add_option("--label", o.label, "free text stored with the line (commit, machine)");
    app.add_option("--max-tokens", o.maxTokens)->capture_default_str();
    app.add_option("--repeats", o.repeats)->capture_default_str();
}

int runBaseline(const BaselineOptions& o)
{
    std::string key = o.apiKey;
    if (key.empty())
        if (const char* env = std::getenv("OPENAI_API_KEY")) key = env;
    const OpenAiClient client(o.baseUrl, key, 600);
    std::string model = o.model;
    if (model.empty()) {
        auto models = client.get("/v1/models");
        if (models.ok() && models.json.contains("data") && !models.json["data"].empty())
            model = models.json["data"][0].value("id", std::string());
    }
    if (model.empty()) {
        std::cerr << "brook-bench: cannot list models at " << o.baseUrl << "; is the server up?\n";
        return 1;
    }
    // Queue state before our requests: what else the server is doing affects the numbers.
    const auto before = client.get("/metrics");
    const std::string metricsText = before.ok() ? before.body : std::string();
    const double waiting = metricValue(metricsText, "vllm:num_requests_waiting");
    const double running = metricValue(metricsText, "vllm:num_requests_running");

    std::vector<double> ttfts, tpots, e2els, rates;
    int outputTokens = 0;
    for (int i = 0; i < o.repeats; ++i) {
        const json body = {{"model", model},
                           {"messages", json::array({{{"role", "user"}, {"content", kQuestion}}})},
                           {"max_tokens", o.maxTokens},
                           {"temperature", 0},
                           {"ignore_eos", true},
                           {"stream", true},
                           {"stream_options", {{"include_usage", true}}}};
        const TimedRequest r = timedStream(client, "/v1/chat/completions", body);
        if (!r.success) {
            std::cerr << "brook-bench: request " << i + 1 << " failed: " << r.error << "\n";
            return 1;
        }
        outputTokens = r.outputTokens;
        ttfts.push_back(r.ttft * 1e3);
        e2els.push_back(r.latency * 1e3);
        if (r.outputTokens > 1) tpots.push_back((r.latency - r.ttft) * 1e3 / double(r.outputTokens - 1));
        rates.push_back(double(r.outputTokens) / r.latency);
    }
    // Memory: Brook's own gauge when the server is Brook, else nvidia-smi on this machine.
    const auto after = client.get("/metrics");
    double usedMiB =
        metricValue(after.ok() ? after.body : std::string(), "brook:device_memory_used_bytes") / (1024.0 * 1024.0);
    std::string memorySource = "brook:device_memory_used_bytes";
    if (!std::isfinite(usedMiB)) {
        usedMiB = nvidiaSmiUsedMiB();
        memorySource = std::isfinite(usedMiB) ? "nvidia-smi" : "none";
    }
    const auto version = client.get("/version");
    const std::string host = hostName();

    const json line = {{"time", isoTimeUtc()},
                       {"host", host},
                       {"label", o.label},
                       {"base_url", o.baseUrl},
                       {"model", model},
                       {"server_version", version.ok() ? version.json.value("version", std::string()) : std::string()},
                       {"requests", o.repeats},
                       {"output_tokens", outputTokens},
                       {"median_ttft_ms", percentileOf(ttfts, 50)},
                       {"median_tpot_ms", percentileOf(tpots, 50)},
                       {"median_e2el_ms", percentileOf(e2els, 50)},
                       {"median_output_tok_s", percentileOf(rates, 50)},
                       {"memory_used_mib", numberOrNull(usedMiB)},
                       {"memory_source", memorySource},
                       {"queue_waiting", numberOrNull(waiting)},
                       {"queue_running", numberOrNull(running)}};

    // Compare with the last line of the history before appending.
    std::string previousText;
    {
        std::ifstream in(o.historyFile);
        for (std::string l; std::getline(in, l);)
            if (!l.empty()) previousText = l;
    }
    std::ofstream out(o.historyFile, std::ios::app);
    out << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    if (!out) {
        std::cerr << "brook-bench: cannot append to " << o.historyFile << "\n";
        return 1;
    }
    std::printf("baseline (%d x %d tokens, %s): TTFT %.1f ms, TPOT %.2f ms, E2EL %.1f ms, %.1f tok/s\n", o.repeats,
                outputTokens, model.c_str(), line["median_ttft_ms"].get<double>(), line["median_tpot_ms"].get<double>(),
                line["median_e2el_ms"].get<double>(), line["median_output_tok_s"].get<double>());
    if (std::isfinite(usedMiB)) std::printf("memory in use: %.0f MiB (%s)\n", usedMiB, memorySource.c_str());
    if (std::isfinite(waiting)) std::printf("queue: %.0f waiting, %.0f running\n", waiting, running);
    auto previous = json::parse(previousText, nullptr, false);
    if (previous.is_object() && previous.contains("median_output_tok_s") &&
        previous["median_output_tok_s"].is_number()) {
        const double was = previous["median_output_tok_s"].get<double>();
        const double ttftWas = previous.value("median_ttft_ms", 0.0);
        std::printf("vs %s: output tok/s %+.1f%%, TTFT %+.1f%%\n",
                    previous.value("time", std::string("previous")).c_str(),
                    was > 0 ? 100.0 * (line["median_output_tok_s"].get<double>() / was - 1.0) : 0.0,
                    ttftWas > 0 ? 100.0 * (line["median_ttft_ms"].get<double>() / ttftWas - 1.0) : 0.0);
    }
    std::printf("appended to %s\n", o.historyFile.c_str());
    return 0;
}

}  // namespace brook
