#include "server/http_connection.h"

#include "server/socket_calls.h"

#include <algorithm>

namespace brook {

namespace {

// Waits are cut into slices this long so a stopping server is noticed.
constexpr int kSliceMs = 200;

}  // namespace

HttpConnection::HttpConnection(socket_t socket, std::chrono::milliseconds writeTimeout,
                               std::function<bool()> stopping)
    : m_socket(socket), m_writeTimeout(writeTimeout), m_stopping(std::move(stopping))
{
    net::prepareNonBlocking(socket);
    net::peerAddress(socket, m_remoteIp, m_remotePort);
    net::localAddress(socket, m_localIp, m_localPort);
}

HttpConnection::~HttpConnection() { net::closeSocket(m_socket); }

HttpConnection::Wait HttpConnection::fill(size_t want, Clock::time_point deadline)
{
    char chunk[16384];
    while (m_buffer.size() < want) {
        if (m_stopping()) return Wait::Closed;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return Wait::TimedOut;
        const net::Ready ready = net::waitReady(m_socket, false, int(std::min<long long>(left, kSliceMs)));
        if (ready == net::Ready::Error) return Wait::Closed;
        if (ready == net::Ready::No) continue;
        const std::ptrdiff_t n = net::recvNow(m_socket, chunk, sizeof(chunk));
        if (n == 0) return Wait::Closed;
        if (n < 0) {
            if (net::retryLater()) continue;
            return Wait::Closed;
        }
        m_buffer.append(chunk, size_t(n));
    }
    return Wait::Ready;
}

void HttpConnection::setRequest(std::string bytes)
{
    m_request = std::move(bytes);
    m_served = 0;
}

ssize_t HttpConnection::read(char* ptr, size_t size)
{
    const size_t n = std::min(size, m_request.size() - m_served);
    std::copy_n(m_request.data() + m_served, n, ptr);
    m_served += n;
    return ssize_t(n);
}

bool HttpConnection::is_writable() const
{
    return net::waitReady(m_socket, true, int(m_writeTimeout.count())) == net::Ready::Yes;
}

ssize_t HttpConnection::write(const char* ptr, size_t size)
{
    size_t sent = 0;
    const auto deadline = Clock::now() + m_writeTimeout;
    while (sent < size) {
        const std::ptrdiff_t n = net::sendNow(m_socket, ptr + sent, size - sent);
        if (n > 0) {
            sent += size_t(n);
            continue;
        }
        if (n < 0 && !net::retryLater()) return -1;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0 || m_stopping()) return -1;
        if (net::waitReady(m_socket, true, int(std::min<long long>(left, kSliceMs))) == net::Ready::Error) return -1;
    }
    return ssize_t(size);
}

bool HttpConnection::sendAll(const std::string& bytes)
{
    return write(bytes.data(), bytes.size()) == ssize_t(bytes.size());
}

void HttpConnection::lingeringClose()
{
    net::shutdownWrite(m_socket);
    // Up to 1 s and 16 MiB: enough for a client to finish a rejected upload and read the answer.
    const auto deadline = Clock::now() + std::chrono::seconds(1);
    size_t drained = 0;
    char chunk[16384];
    while (drained < (16u << 20) && Clock::now() < deadline && !m_stopping()) {
        if (net::waitReady(m_socket, false, kSliceMs) != net::Ready::Yes) continue;
        const std::ptrdiff_t n = net::recvNow(m_socket, chunk, sizeof(chunk));
        if (n == 0 || (n < 0 && !net::retryLater())) break;
        if (n > 0) drained += size_t(n);
    }
}

void HttpConnection::discardAvailable()
{
    char chunk[16384];
    for (int i = 0; i < 64 && net::recvNow(m_socket, chunk, sizeof(chunk)) > 0; ++i) {}
}

void HttpConnection::get_remote_ip_and_port(std::string& ip, int& port) const
{
    ip = m_remoteIp;
    port = m_remotePort;
}

void HttpConnection::get_local_ip_and_port(std::string& ip, int& port) const
{
    ip = m_localIp;
    port = m_localPort;
}

}  // namespace brook
