// OpenAiClient: a small client for OpenAI-compatible servers (Brook, vLLM, ...), used by
// brook-bench serve/baseline and the server tests: JSON GET/POST, and streaming POSTs whose SSE
// events ("data: {...}" ... "data: [DONE]") are parsed as they arrive and time-stamped.
// Thread-safe. get/post open a connection per call; stream() reuses kept-alive connections from a
// small pool (as the OpenAI SDK's and vLLM's benchmark clients do), so a benchmark's time to first
// token does not include a TCP handshake, and turns Nagle off so a request's body is not held back
// behind its head. Copies share the pool.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace brook {

struct HttpResult {
    int status = 0;  // 0: no HTTP answer (see transportError)
    std::string transportError;
    std::string body;
    nlohmann::json json;  // the body parsed, when it is JSON (else null)
    std::vector<std::pair<std::string, std::string>> headers;
    bool ok() const { return status >= 200 && status < 300; }
    std::string header(const std::string& name) const;  // case-insensitive; empty when absent
};

struct StreamEvent {
    nlohmann::json data;  // one "data:" payload (the [DONE] marker is not an event)
    double seconds = 0;   // since the request was sent, until the bytes that completed it were received
};

struct StreamResult {
    int status = 0;
    std::string transportError;
    std::string errorBody;  // the body of a non-200 answer
    std::vector<StreamEvent> events;
    bool sawDone = false;  // "data: [DONE]" arrived
    std::string raw;       // the whole body as received (framing checks)
    double seconds = 0;    // until the body ended
    bool ok() const { return status == 200 && transportError.empty(); }
};

class OpenAiClient {
public:
    // baseUrl: "http://host:port" with an optional path prefix; paths are appended to it.
    explicit OpenAiClient(std::string baseUrl, std::string apiKey = {}, double timeoutSeconds = 600);

    HttpResult get(const std::string& path) const;
    HttpResult post(const std::string& path, const nlohmann::json& body) const;
    HttpResult postRaw(const std::string& path, const std::string& body, const std::string& contentType,
                       const std::vector<std::pair<std::string, std::string>>& headers = {}) const;
    // Streams a POST; `onEvent` (optional) sees each event as it arrives and may return false to
    // hang up (the connection is closed at once, as a client that goes away would).
    StreamResult stream(const std::string& path, const nlohmann::json& body,
                        const std::function<bool(const StreamEvent&)>& onEvent = {}) const;

private:
    struct ConnectionPool;

    std::string m_schemeHostPort;
    std::string m_prefix;
    std::string m_apiKey;
    double m_timeoutSeconds;
    std::shared_ptr<ConnectionPool> m_pool;  // stream()'s idle kept-alive connections
};

}  // namespace brook
