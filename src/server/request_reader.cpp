#include "server/request_reader.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <sstream>

namespace brook {

namespace {

using Clock = HttpConnection::Clock;

ApiError httpError(int status, std::string message, std::string code = {})
{
    ApiError e = ApiError::badRequest(std::move(message));
    e.status = status;
    e.code = std::move(code);
    return e;
}

bool equalsNoCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Whether a comma-separated header value lists `token` ("keep-alive, Upgrade").
bool listsToken(std::string_view value, std::string_view token)
{
    while (!value.empty()) {
        const size_t comma = value.find(',');
        if (equalsNoCase(trim(value.substr(0, comma)), token)) return true;
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
    }
    return false;
}

bool isTokenChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::optional<uint64_t> parseDecimal(std::string_view s)
{
    if (s.empty() || s.size() > 18) return std::nullopt;  // 18 digits: no overflow, far past any limit
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + uint64_t(c - '0');
    }
    return v;
}

// Splits off the next line (LF or CRLF) of `text`.
std::string_view nextLine(std::string_view& text)
{
    const size_t lf = text.find('\n');
    std::string_view line = text.substr(0, lf);
    text.remove_prefix(lf == std::string_view::npos ? text.size() : lf + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
}

// Where the head ends (just past its blank line), or npos.
size_t headEnd(const std::string& buffer, size_t from)
{
    for (size_t i = buffer.find('\n', from); i != std::string::npos; i = buffer.find('\n', i + 1)) {
        if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
        if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
    }
    return std::string::npos;
}

ApiError timedOut(const HttpLimits& limits)
{
    std::ostringstream seconds;
    seconds << double(limits.readDeadline.count()) / 1000.0;
    return httpError(408, "the request was not received within " + seconds.str() + " s (--http-read-timeout)",
                     "request_timeout");
}

ApiError tooLarge(const HttpLimits& limits) { return ApiError::payloadTooLarge(limits.maxBodyBytes); }

ApiError tooManySlow(const std::string& client)
{
    ApiError e = ApiError::queueFull("too many slow connections from " + client +
                                     " (--max-connections-per-client); finish or close some");
    e.code = "too_many_connections";
    return e;
}

// Waits for a request's bytes. Past `slowAt` the connection counts as slow, and goes on waiting
// only if admitSlow() gives it one of its client's places.
struct Waiter {
    HttpConnection& c;
    Clock::time_point slowAt;
    const std::function<bool()>& admitSlow;
    bool slow = false;

    enum Result { Ready, Closed, TimedOut, Refused };
    Result fill(size_t want, Clock::time_point deadline)
    {
        if (!slow && slowAt < deadline) {
            const auto early = c.fill(want, slowAt);
            if (early != HttpConnection::Wait::TimedOut) return early == HttpConnection::Wait::Ready ? Ready : Closed;
            slow = true;
            if (!admitSlow()) return Refused;
        }
        const auto wait = c.fill(want, deadline);
        return wait == HttpConnection::Wait::Ready ? Ready : wait == HttpConnection::Wait::Closed ? Closed : TimedOut;
    }
};

// The error for a wait that did not end Ready while a request was being read.
std::optional<ApiError> waitError(Waiter::Result r, const HttpLimits& limits, const HttpConnection& c,
                                  const char* closedMessage)
{
    switch (r) {
    case Waiter::Ready: return std::nullopt;
    case Waiter::TimedOut: return timedOut(limits);
    case Waiter::Refused: return tooManySlow(c.remoteIp());
    case Waiter::Closed: break;
    }
    return ApiError::badRequest(closedMessage);
}

// Reads a chunked body into `body`, refusing it as soon as it passes the limit.
std::optional<ApiError> readChunked(Waiter& w, const HttpLimits& limits, Clock::time_point deadline, std::string& body)
{
    HttpConnection& c = w.c;
    auto line = [&](std::string& out) -> std::optional<ApiError> {
        size_t lf;
        while ((lf = c.buffered().find('\n')) == std::string::npos) {
            if (c.buffered().size() > 4096)
                return ApiError::badRequest("malformed chunked body: a chunk line is too long");
            if (auto e =
                    waitError(w.fill(c.buffered().size() + 1, deadline), limits, c, "the chunked body ended early"))
                return e;
        }
        out.assign(c.buffered(), 0, lf);
        if (!out.empty() && out.back() == '\r') out.pop_back();
        c.consume(lf + 1);
        return std::nullopt;
    };
    std::string text;
    for (;;) {
        if (auto e = line(text)) return e;
        std::string_view size = trim(std::string_view(text).substr(0, text.find(';')));
        if (size.empty() || size.size() > 15 || !std::all_of(size.begin(), size.end(), [](char ch) {
                return std::isxdigit(static_cast<unsigned char>(ch));
            }))
            return ApiError::badRequest("malformed chunked body: bad chunk size");
        const uint64_t n = std::stoull(std::string(size), nullptr, 16);
        if (n == 0) break;
        if (body.size() + n > limits.maxBodyBytes) return tooLarge(limits);
        if (auto e = waitError(w.fill(size_t(n), deadline), limits, c, "the chunked body ended early")) return e;
        body.append(c.buffered(), 0, size_t(n));
        c.consume(size_t(n));
        if (auto e = line(text)) return e;
        if (!text.empty()) return ApiError::badRequest("malformed chunked body: data longer than its chunk size");
    }
    // Trailer fields, up to the blank line; ignored.
    for (size_t count = 0;; ++count) {
        if (count > 64) return ApiError::badRequest("malformed chunked body: too many trailer fields");
        if (auto e = line(text)) return e;
        if (text.empty()) return std::nullopt;
    }
}

std::string reframe(const RequestHead& head, const std::string* body)
{
    std::string out = head.method + " " + head.target + " " + head.version + "\r\n";
    for (const auto& [name, value] : head.headers) {
        if (equalsNoCase(name, "Content-Length") || equalsNoCase(name, "Transfer-Encoding") ||
            equalsNoCase(name, "Expect"))
            continue;
        out += name + ": " + value + "\r\n";
    }
    if (body) out += "Content-Length: " + std::to_string(body->size()) + "\r\n";
    out += "\r\n";
    if (body) out += *body;
    return out;
}

}  // namespace

const std::string* RequestHead::header(std::string_view name) const
{
    for (const auto& h : headers)
        if (equalsNoCase(h.first, name)) return &h.second;
    return nullptr;
}

std::variant<RequestHead, ApiError> parseRequestHead(std::string_view text, const HttpLimits& limits)
{
    RequestHead head;
    const std::string_view requestLine = nextLine(text);
    const size_t sp1 = requestLine.find(' ');
    const size_t sp2 = requestLine.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1) return ApiError::badRequest("malformed HTTP request line");
    head.method = std::string(requestLine.substr(0, sp1));
    head.target = std::string(requestLine.substr(sp1 + 1, sp2 - sp1 - 1));
    head.version = std::string(requestLine.substr(sp2 + 1));
    if (head.method.empty() || !std::all_of(head.method.begin(), head.method.end(), isTokenChar))
        return ApiError::badRequest("malformed HTTP request line");
    if (head.target.size() > limits.maxTargetBytes)
        return httpError(414, "the request URI is longer than " + std::to_string(limits.maxTargetBytes) + " bytes",
                         "uri_too_long");
    if (head.target.empty() || head.target.find(' ') != std::string::npos)
        return ApiError::badRequest("malformed HTTP request line");
    if (head.version != "HTTP/1.1" && head.version != "HTTP/1.0")
        return httpError(505, "only HTTP/1.0 and HTTP/1.1 are supported, got '" + head.version + "'");

    while (!text.empty()) {
        const std::string_view line = nextLine(text);
        if (line.empty()) break;
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0 ||
            !std::all_of(line.begin(), line.begin() + long(colon), isTokenChar))
            return ApiError::badRequest("malformed HTTP header line");
        head.headers.emplace_back(std::string(line.substr(0, colon)), std::string(trim(line.substr(colon + 1))));
    }

    for (const auto& [name, value] : head.headers) {
        if (equalsNoCase(name, "Content-Length")) {
            const auto length = parseDecimal(value);
            if (!length) return ApiError::badRequest("invalid Content-Length '" + value + "'");
            if (head.contentLength && *head.contentLength != *length)
                return ApiError::badRequest("conflicting Content-Length headers");
            head.contentLength = length;
        } else if (equalsNoCase(name, "Transfer-Encoding")) {
            if (!equalsNoCase(value, "chunked") || head.chunked || head.version != "HTTP/1.1")
                return httpError(501, "Transfer-Encoding '" + value + "' is not supported (only chunked, on HTTP/1.1)");
            head.chunked = true;
        } else if (equalsNoCase(name, "Content-Encoding")) {
            if (!equalsNoCase(value, "identity"))
                return httpError(415, "Content-Encoding '" + value + "' is not supported: send the body uncompressed",
                                 "unsupported_content_encoding");
        } else if (equalsNoCase(name, "Expect")) {
            if (!equalsNoCase(value, "100-continue")) return httpError(417, "Expect '" + value + "' is not supported");
            head.expectContinue = head.version == "HTTP/1.1";
        } else if (equalsNoCase(name, "Connection")) {
            if (listsToken(value, "close")) head.keepAlive = false;
        }
    }
    if (head.chunked && head.contentLength)
        return ApiError::badRequest("a request must not carry both Content-Length and Transfer-Encoding");
    // HTTP/1.0 connections serve one request: a stream to them is delimited by the close.
    if (head.version == "HTTP/1.0") head.keepAlive = false;
    return head;
}

RequestReader::Outcome RequestReader::read(HttpConnection& c, const HttpLimits& limits,
                                           const std::function<bool()>& admitSlow)
{
    Waiter w{c, Clock::now() + limits.slowAfter, admitSlow};
    Outcome out;
    auto fail = [&](ApiError e) {
        out.kind = Outcome::Error;
        out.error = std::move(e);
        return out;
    };
    // Between requests: a quiet or closed connection just ends. Blank lines before a request are
    // tolerated (RFC 9112 2.2).
    for (;;) {
        if (w.fill(1, Clock::now() + limits.idleTimeout) != Waiter::Ready) return out;  // refused: closed quietly
        const size_t skip = c.buffered().find_first_not_of("\r\n");
        if (skip == std::string::npos) {
            c.consume(c.buffered().size());
            continue;
        }
        c.consume(skip);
        break;
    }
    out.firstByte = Clock::now();
    const auto deadline = out.firstByte + limits.readDeadline;

    size_t end = std::string::npos;
    size_t searched = 0;
    while ((end = headEnd(c.buffered(), searched)) == std::string::npos) {
        const std::string& b = c.buffered();
        if (b.find('\n') == std::string::npos && b.size() > limits.maxTargetBytes + 64)
            return fail(httpError(414,
                                  "the request URI is longer than " + std::to_string(limits.maxTargetBytes) + " bytes",
                                  "uri_too_long"));
        if (b.size() > limits.maxHeadBytes)
            return fail(httpError(431, "the request headers are larger than " + std::to_string(limits.maxHeadBytes) +
                                           " bytes"));
        searched = b.size() >= 3 ? b.size() - 3 : 0;
        const auto wait = w.fill(b.size() + 1, deadline);
        if (wait == Waiter::Closed) return out;
        if (auto e = waitError(wait, limits, c, "")) return fail(*e);
    }
    if (end > limits.maxHeadBytes)
        return fail(
            httpError(431, "the request headers are larger than " + std::to_string(limits.maxHeadBytes) + " bytes"));
    auto parsed = parseRequestHead(std::string_view(c.buffered()).substr(0, end), limits);
    c.consume(end);
    if (auto* error = std::get_if<ApiError>(&parsed)) return fail(*error);
    RequestHead& head = std::get<RequestHead>(parsed);

    if (head.contentLength && *head.contentLength > limits.maxBodyBytes) return fail(tooLarge(limits));
    const bool hasBody = head.chunked || head.contentLength;
    if (hasBody && head.expectContinue && !c.sendAll("HTTP/1.1 100 Continue\r\n\r\n")) return out;
    std::string body;
    if (head.chunked) {
        if (auto e = readChunked(w, limits, deadline, body)) return fail(*e);
    } else if (head.contentLength && *head.contentLength > 0) {
        const auto wait = w.fill(size_t(*head.contentLength), deadline);
        if (wait == Waiter::Closed) return out;
        if (auto e = waitError(wait, limits, c, "")) return fail(*e);
        body.assign(c.buffered(), 0, size_t(*head.contentLength));
        c.consume(size_t(*head.contentLength));
    }
    out.kind = Outcome::Request;
    out.keepAlive = head.keepAlive;
    out.bytes = reframe(head, hasBody ? &body : nullptr);
    return out;
}

}  // namespace brook
