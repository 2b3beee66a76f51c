#include "loadgen/openai_client.h"

#include "hub/blob_downloader.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>

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

std::unique_ptr<httplib::Client> makeClient(const std::string& schemeHostPort, double timeoutSeconds)
{
    auto client = std::make_unique<httplib::Client>(schemeHostPort);
    const auto seconds = time_t(timeoutSeconds);
    const auto micros = time_t((timeoutSeconds - double(seconds)) * 1e6);
    client->set_connection_timeout(10, 0);
    client->set_read_timeout(seconds, micros);
    client->set_write_timeout(seconds, micros);
    client->set_keep_alive(false);
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

std::string HttpResult::header(const std::string& name) const
{
    for (const auto& [key, value] : headers)
        if (equalsIgnoreCase(key, name)) return value;
    return {};
}

OpenAiClient::OpenAiClient(std::string baseUrl, std::string apiKey, double timeoutSeconds)
    : m_apiKey(std::move(apiKey)), m_timeoutSeconds(timeoutSeconds)
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
    auto client = makeClient(m_schemeHostPort, m_timeoutSeconds);
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
            event.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
            event.data = json::parse(data, nullptr, false);
            if (event.data.is_discarded()) event.data = json{{"unparsed", data}};
            result.events.push_back(event);
            if (onEvent && !onEvent(result.events.back())) keepGoing = false;
        }
    };
    req.response_handler = [&](const httplib::Response& response) {
        result.status = response.status;
        return true;
    };
    req.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
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
    return result;
}

}  // namespace brook
