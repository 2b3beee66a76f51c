#include "loadgen/openai_client.h"

#include "hub/blob_downloader.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <vector>

namespace brook {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

// A dataset prompt may hold invalid UTF-8 (a cut multi-byte character): send U+FFFD for it rather
// than throw, as the server does for what it writes.
std::string requestBody(const json& body) { return body.dump(-1, ' ', false, json::error_handler_t::replace); }

bool equalsIgnoreCase(const std::string& a, const std::string& b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::unique_ptr<httplib::Client> makeClient(const std::string& schemeHostPort, double timeoutSeconds,
                                            bool keepAlive = false)
{
    auto client = std::make_unique<httplib::Client>(schemeHostPort);
    const auto seconds = time_t(timeoutSeconds);
    const auto micros = time_t((timeoutSeconds - double(seconds)) * 1e6);
    client->set_connection_timeout(10, 0);
    client->set_read_timeout(seconds, micros);
    client->set_write_timeout(seconds, micros);
    client->set_keep_alive(keepAlive);
    // cpp-httplib writes a request's head and body in two writes; with Nagle on, the body waits
    // for the server's ACK of the head.
    client->set_tcp_nodelay(true);
    return client;
}

HttpResult toResult(const httplib::Result& r)
{
    HttpResult out;
    if (!r) {
        out.transportError = httplib::to_string(r.error());
        return out;
    }
    out.status = r->status;
    out.body = r->body;
    for (const auto& [name, value] : r->headers) out.headers.emplace_back(name, value);
    out.json = json::parse(out.body, nullptr, false);
    if (out.json.is_discarded()) out.json = nullptr;
    return out;
}

}  // namespace

struct OpenAiClient::ConnectionPool {
    std::mutex mutex;
    std::vector<std::unique_ptr<httplib::Client>> idle;

    std::unique_ptr<httplib::Client> take()
    {
        std::lock_guard lock(mutex);
        if (idle.empty()) return nullptr;
        auto client = std::move(idle.back());
        idle.pop_back();
        return client;
    }
    void give(std::unique_ptr<httplib::Client> client)
    {
        std::lock_guard lock(mutex);
        idle.push_back(std::move(client));
    }
};

std::string HttpResult::header(const std::string& name) const
{
    for (const auto& [key, value] : headers)
        if (equalsIgnoreCase(key, name)) return value;
    return {};
}

OpenAiClient::OpenAiClient(std::string baseUrl, std::string apiKey, double timeoutSeconds)
    : m_apiKey(std::move(apiKey)), m_timeoutSeconds(timeoutSeconds), m_pool(std::make_shared<ConnectionPool>())
{
    while (!baseUrl.empty() && baseUrl.back() == '/') baseUrl.pop_back();
    if (auto parts = BlobDownloader::splitUrl(baseUrl)) {
        m_schemeHostPort = parts->schemeHostPort;
        m_prefix = parts->path == "/" ? "" : parts->path;
    } else {
        m_schemeHostPort = baseUrl;  // let httplib report what is wrong with it
    }
}

HttpResult OpenAiClient::get(const std::string& path) const
{
    auto client = makeClient(m_schemeHostPort, m_timeoutSeconds);
    httplib::Headers headers;
    if (!m_apiKey.empty()) headers.emplace("Authorization", "Bearer " + m_apiKey);
    return toResult(client->Get((m_prefix + path).c_str(), headers));
}

HttpResult OpenAiClient::post(const std::string& path, const json& body) const
{
    return postRaw(path, requestBody(body), "application/json");
}

HttpResult OpenAiClient::postRaw(const std::string& path, const std::string& body, const std::string& contentType,
                                 const std::vector<std::pair<std::string, std::string>>& extraHeaders) const
{
    auto client = makeClient(m_schemeHostPort, m_timeoutSeconds);
    httplib::Headers headers;
    if (!m_apiKey.empty()) headers.emplace("Authorization", "Bearer " + m_apiKey);
    for (const auto& [name, value] : extraHeaders) headers.emplace(name, value);
    return toResult(client->Post((m_prefix + path).c_str(), headers, body, contentType.c_str()));
}

StreamResult OpenAiClient::stream(const std::string& path, const json& body,
                                  const std::function<bool(const StreamEvent&)>& onEvent) const
{
    StreamResult result;
    // A pooled connection the server has closed meanwhile is noticed by cpp-httplib before it
    // writes, and reopened.
    std::unique_ptr<httplib::Client> client = m_pool->take();
    if (!client) client = makeClient(m_schemeHostPort, m_timeoutSeconds, true);
    httplib::Request req;
    req.method = "POST";
    req.path = m_prefix + path;
    req.headers.emplace("Content-Type", "application/json");
    req.headers.emplace("Accept", "text/event-stream");
    if (!m_apiKey.empty()) req.headers.emplace("Authorization", "Bearer " + m_apiKey);
    req.body = requestBody(body);

    const auto start = SteadyClock::now();
    std::string pending;  // bytes after the last complete event
    bool keepGoing = true;
    double receivedSeconds = 0;  // when the bytes being parsed arrived
    auto parseEvents = [&] {
        // Events end with a blank line; each "data:" line of an event carries its payload.
        for (size_t end; keepGoing && (end = pending.find("\n\n")) != std::string::npos;) {
            const std::string block = pending.substr(0, end);
            pending.erase(0, end + 2);
            std::string data;
            size_t lineStart = 0;
            while (lineStart <= block.size()) {
                size_t lineEnd = block.find('\n', lineStart);
                if (lineEnd == std::string::npos) lineEnd = block.size();
                std::string line = block.substr(lineStart, lineEnd - lineStart);
                if (!line.empty() && line.back() == '\r') line.pop_back();
                if (line.rfind("data:", 0) == 0) data += line.substr(line.size() > 5 && line[5] == ' ' ? 6 : 5);
                lineStart = lineEnd + 1;
            }
            if (data.empty()) continue;  // a comment or keep-alive
            if (data == "[DONE]") {
                result.sawDone = true;
                continue;
            }
            StreamEvent event;
            // Events that arrived together are timed together: parsing the earlier ones is the
            // client's work, not the server's.
            event.seconds = receivedSeconds;
            event.data = json::parse(data, nullptr, false);
            if (event.data.is_discarded()) event.data = json{{"unparsed", data}};
            result.events.push_back(event);
            if (onEvent && !onEvent(result.events.back())) keepGoing = false;
        }
    };
    double headSeconds = -1, firstByteSeconds = -1;  // for the debug line
    auto since = [&] { return std::chrono::duration<double>(SteadyClock::now() - start).count(); };
    req.response_handler = [&](const httplib::Response& response) {
        headSeconds = since();
        result.status = response.status;
        return true;
    };
    req.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
        receivedSeconds = since();
        if (firstByteSeconds < 0) firstByteSeconds = receivedSeconds;
        result.raw.append(data, length);
        if (result.status != 200) return true;
        pending.append(data, length);
        parseEvents();
        return keepGoing;
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    const bool sent = client->send(req, res, error);
    result.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
    if (result.status == 0) result.status = res.status > 0 ? res.status : 0;
    if (!sent && keepGoing) result.transportError = httplib::to_string(error);
    if (result.status != 200) result.errorBody = result.raw.empty() ? res.body : result.raw;
    // Only a connection whose answer ended cleanly is reused; one hung up on is closed here.
    if (sent && keepGoing && result.sawDone) m_pool->give(std::move(client));
    // Joins with the server's "first token hops" line: both use the machine's monotonic clock.
    spdlog::debug("stream {}: sent at {} ns (steady clock), response head +{:.3f} ms, first body byte +{:.3f} ms, "
                  "first event +{:.3f} ms, end +{:.3f} ms",
                  path, std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count(),
                  headSeconds * 1e3, firstByteSeconds * 1e3,
                  result.events.empty() ? -1.0 : result.events.front().seconds * 1e3, result.seconds * 1e3);
    return result;
}

}  // namespace brook
