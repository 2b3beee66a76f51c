// RequestReader: takes one HTTP/1.x request off a connection before cpp-httplib sees it, so the
// limits hold whatever the client sends: one deadline for the head and body together (408), a
// bounded head (414 for the target, 431 for the rest), a valid Content-Length (400), bodies over
// the limit refused while they arrive, chunked ones included (413), and no compressed bodies
// (415): cpp-httplib 0.11 would inflate gzip without a limit and accepts chunked bodies of any
// size (CVE-2025-46728). The request is handed on re-framed with a Content-Length. A connection
// whose request is not in after a grace time counts as slow, and each client may have only so
// many slow ones (admitSlow), so slow senders cannot take every thread.
// Stateless; read() runs on the connection's worker thread.
#pragma once

#include "server/api_error.h"
#include "server/http_connection.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace brook {

struct HttpLimits {
    size_t maxBodyBytes = 8u << 20;
    size_t maxHeadBytes = 64u << 10;
    size_t maxTargetBytes = 8192;
    std::chrono::milliseconds readDeadline{30000};  // head and body, from the request's first byte
    std::chrono::milliseconds idleTimeout{5000};    // a kept-alive connection's wait for the next request
    std::chrono::milliseconds slowAfter{2000};      // a request not in by then makes its connection "slow"
};

struct RequestHead {
    std::string method, target, version;
    std::vector<std::pair<std::string, std::string>> headers;  // in order, names as sent
    std::optional<uint64_t> contentLength;
    bool chunked = false;
    bool expectContinue = false;
    bool keepAlive = true;  // by version and the Connection header

    const std::string* header(std::string_view name) const;  // first one, case-insensitive
};

// Parses a request head (request line and header lines, without the blank line that ends it).
std::variant<RequestHead, ApiError> parseRequestHead(std::string_view text, const HttpLimits& limits);

class RequestReader {
public:
    struct Outcome {
        enum Kind { Request, Idle, Error } kind = Idle;  // Idle: closed or quiet between requests
        std::string bytes;                               // Request: the request re-framed for cpp-httplib
        bool keepAlive = false;
        std::optional<ApiError> error;
        std::chrono::steady_clock::time_point firstByte;  // when the request's first byte was in
    };
    // `admitSlow` is asked once, when the request is still incomplete after limits.slowAfter
    // (counting from the wait for it): false ends the connection (429, or quietly when nothing
    // was sent yet).
    static Outcome read(HttpConnection& connection, const HttpLimits& limits, const std::function<bool()>& admitSlow);
};

}  // namespace brook
