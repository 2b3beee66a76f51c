// GuardedHttpServer: cpp-httplib's Server with Brook's own connection loop. cpp-httplib 0.11
// gives every connection a pool thread and waits on it without a total deadline (a client that
// sends a header line every few seconds holds its thread forever), answers only the first of
// several pipelined requests, and takes chunked or gzip bodies of any size. Here every request
// is read whole by RequestReader under one deadline and the limits, and only then handed to
// cpp-httplib's routing, one at a time and in order. A connection still waiting for its request
// after a grace time is slow and takes one of its client's places (ClientLimiter); past the cap
// it is refused, so one client's slow connections leave the other threads to everyone else.
// Fast clients are not counted: a benchmark may open hundreds of busy connections.
// Configure before bind; the loop runs on cpp-httplib's worker threads.
#pragma once

#include "server/client_limiter.h"
#include "server/request_reader.h"

#include <httplib.h>

#include <chrono>
#include <memory>

namespace brook {

class GuardedHttpServer : public httplib::Server {
public:
    // `maxPerClient`: slow connections one client address may hold; `keepAliveMax`: requests per
    // connection before it is closed.
    void configure(const HttpLimits& limits, int maxPerClient, size_t keepAliveMax,
                   std::chrono::milliseconds writeTimeout);

private:
    bool process_and_close_socket(socket_t sock) override;
    // Answers and ends the connection; `linger` waits (bounded) for an upload to end first.
    void sendError(HttpConnection& connection, const ApiError& error, bool linger);

    HttpLimits m_limits;
    std::unique_ptr<ClientLimiter> m_clients = std::make_unique<ClientLimiter>(1 << 30);
    size_t m_keepAliveMax = 100;
    std::chrono::milliseconds m_writeTimeout{30000};
};

}  // namespace brook
