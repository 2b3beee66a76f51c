#include "server/guarded_http_server.h"

#include "server/request_timeline.h"
#include "server/socket_calls.h"

#include <spdlog/spdlog.h>

namespace brook {

namespace {

const char* reasonPhrase(int status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

}  // namespace

void GuardedHttpServer::configure(const HttpLimits& limits, int maxPerClient, size_t keepAliveMax,
                                  std::chrono::milliseconds writeTimeout)
{
    m_limits = limits;
    m_clients = std::make_unique<ClientLimiter>(maxPerClient);
    m_keepAliveMax = keepAliveMax;
    m_writeTimeout = writeTimeout;
}

void GuardedHttpServer::sendError(HttpConnection& connection, const ApiError& error, bool linger)
{
    const std::string body = error.body();
    const std::string response =
        "HTTP/1.1 " + std::to_string(error.status) + " " + reasonPhrase(error.status) +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n\r\n" + body;
    // Floods of slow connections would flood the log too: those refusals are debug lines.
    spdlog::log(error.status == 429 ? spdlog::level::debug : spdlog::level::info, "{}: refused before routing: {} {}",
                connection.remoteIp(), error.status, error.message);
    connection.discardAvailable();
    if (connection.sendAll(response) && linger) connection.lingeringClose();
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock)
{
    RequestTimeline timeline;
    timeline.accepted = RequestTimeline::Clock::now();
    // A stream writes one small SSE event per token batch: with Nagle on, an event written while
    // the previous one is unacknowledged waits for the client's delayed ACK (up to 40 ms on Linux).
    // cpp-httplib's tcp_nodelay only reaches the listening socket, so set it here, where every
    // accepted socket passes.
    if (!net::setNoDelay(sock)) spdlog::debug("could not set TCP_NODELAY on an accepted socket");
    HttpConnection connection(sock, m_writeTimeout, [this] { return !is_running(); });
    for (size_t served = 0; served < m_keepAliveMax && is_running(); ++served) {
        // A slow connection holds one of its client's places until its request is in.
        std::optional<ClientLimiter::Slot> slow;
        auto admitSlow = [&] {
            slow = m_clients->tryAcquire(connection.remoteIp());
            return slow.has_value();
        };
        RequestReader::Outcome in = RequestReader::read(connection, m_limits, admitSlow);
        slow.reset();
        if (in.kind == RequestReader::Outcome::Idle) break;
        if (in.kind == RequestReader::Outcome::Error) {
            // A client that was too slow gets no more time; one refused mid-upload may still be
            // sending, and must get to read why.
            const int status = in.error->status;
            sendError(connection, *in.error, status != 408 && status != 429);
            break;
        }
        const bool last = !in.keepAlive || served + 1 == m_keepAliveMax || !is_running();
        timeline.firstByte = in.firstByte;
        timeline.requestRead = RequestTimeline::Clock::now();
        connection.setRequest(std::move(in.bytes));
        bool closed = false;
        bool ok = false;
        {
            // The handler learns its socket and the network hops from here (same thread).
            CurrentConnection::Scope current(sock, timeline);
            ok = process_request(connection, last, closed, nullptr);
        }
        if (!ok || closed || last) break;
        timeline = RequestTimeline{};
        timeline.accepted = RequestTimeline::Clock::now();  // a kept-alive connection's next request
    }
    return true;  // the connection's destructor closes the socket
}

}  // namespace brook
