// Shared by the server tests: an OpenAiServer started in-process on an ephemeral port over a tiny
// random-weight model on the CPU backend, a client for it, and a Prometheus text parser.
#pragma once

#include "../engine/engine_test_support.h"
#include "loadgen/openai_client.h"
#include "server/openai_server.h"
#include "server/server_context.h"

#include <QtTest>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <map>
#include <sstream>
#include <string>

namespace brook::testsupport {

inline LaunchOptions serverLaunchOptions()
{
    LaunchOptions o = cpuOptions();
    o.maxModelLen = 4096;  // long enough that a 4000-token answer outlasts a client that hangs up
    o.maxNumSeqs = 64;
    o.maxNumBatchedTokens = 1024;
    return o;
}

inline ServeConfig testServeConfig()
{
    ServeConfig c;
    c.host = "127.0.0.1";
    c.port = 0;
    c.servedModelNames = {"tiny-ernie"};
    c.logLevel = "warn";
    return c;
}

class InProcessServer {
public:
    explicit InProcessServer(ServeConfig config = testServeConfig(), LaunchOptions launch = serverLaunchOptions(),
                             bool attachNow = true)
        : m_launch(std::move(launch)), m_server(std::make_unique<OpenAiServer>(config))
    {
        spdlog::set_level(spdlog::level::warn);  // no access log lines in test output
        m_launch.servedModelName = config.primaryModelName();
        auto port = m_server->start();
        if (!port) qFatal("server start: %s", port.error().c_str());
        m_port = *port;
        if (attachNow) attach();
    }
    ~InProcessServer()
    {
        m_server->stop();
        m_server.reset();
        if (m_launched.engine) m_launched.engine->shutdown();
    }

    void attach()
    {
        auto launched = launchEngine(m_launch);
        if (!launched) qFatal("launchEngine: %s", launched.error().c_str());
        m_launched = std::move(launched).value();
        m_server->attach(*m_launched.engine, m_launched.generationDefaults, m_launch.modelDir);
    }

    std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(m_port); }
    OpenAiClient client(const std::string& apiKey = {}) const { return OpenAiClient(baseUrl(), apiKey, 120); }
    OpenAiServer& server() { return *m_server; }
    Engine& engine() { return *m_launched.engine; }
    int port() const { return m_port; }

private:
    LaunchOptions m_launch;
    LaunchedEngine m_launched;
    std::unique_ptr<OpenAiServer> m_server;
    int m_port = 0;
};

// One sample line of the Prometheus text format: name{labels} value.
struct PromSample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
};

struct PromText {
    std::vector<PromSample> samples;
    std::map<std::string, std::string> types;  // family -> counter | gauge | histogram
    std::string error;                         // first malformed line, if any

    double value(const std::string& name, const std::map<std::string, std::string>& match = {}) const
    {
        double sum = 0;
        for (const PromSample& s : samples) {
            if (s.name != name) continue;
            bool ok = true;
            for (const auto& [k, v] : match) ok = ok && s.labels.count(k) && s.labels.at(k) == v;
            if (ok) sum += s.value;
        }
        return sum;
    }
};

inline PromText parsePrometheus(const std::string& text)
{
    PromText out;
    std::stringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (line.rfind("# TYPE ", 0) == 0) {
            std::stringstream parts(line.substr(7));
            std::string name, type;
            parts >> name >> type;
            out.types[name] = type;
            continue;
        }
        if (line[0] == '#') continue;
        PromSample s;
        size_t pos = line.find_first_of("{ ");
        if (pos == std::string::npos) {
            out.error = line;
            break;
        }
        s.name = line.substr(0, pos);
        if (line[pos] == '{') {
            const size_t close = line.find('}', pos);
            if (close == std::string::npos) {
                out.error = line;
                break;
            }
            std::string labels = line.substr(pos + 1, close - pos - 1);
            size_t i = 0;
            while (i < labels.size()) {
                const size_t eq = labels.find('=', i);
                if (eq == std::string::npos || eq + 1 >= labels.size() || labels[eq + 1] != '"') {
                    out.error = line;
                    break;
                }
                const size_t endQuote = labels.find('"', eq + 2);
                s.labels[labels.substr(i, eq - i)] = labels.substr(eq + 2, endQuote - eq - 2);
                i = endQuote + 1;
                if (i < labels.size() && labels[i] == ',') ++i;
            }
            pos = close + 1;
        }
        try {
            s.value = std::stod(line.substr(pos + 1));
        } catch (const std::exception&) {
            if (line.substr(pos + 1) == "+Inf") s.value = INFINITY;
            else {
                out.error = line;
                break;
            }
        }
        out.samples.push_back(std::move(s));
    }
    return out;
}

inline nlohmann::json chatBody(const std::string& user, int maxTokens, bool stream = false)
{
    return {{"model", "tiny-ernie"},
            {"messages", nlohmann::json::array({{{"role", "user"}, {"content", user}}})},
            {"max_tokens", maxTokens},
            {"temperature", 0},
            {"stream", stream}};
}

// The text a stream carried, per choice index.
inline std::map<int, std::string> streamedText(const StreamResult& r)
{
    std::map<int, std::string> text;
    for (const StreamEvent& e : r.events) {
        if (!e.data.contains("choices")) continue;
        for (const auto& c : e.data["choices"]) {
            const int index = c["index"].get<int>();
            if (c.contains("delta") && c["delta"].contains("content") && c["delta"]["content"].is_string())
                text[index] += c["delta"]["content"].get<std::string>();
            if (c.contains("text") && c["text"].is_string()) text[index] += c["text"].get<std::string>();
        }
    }
    return text;
}

}  // namespace brook::testsupport
