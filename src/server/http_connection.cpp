#include "server/http_connection.h"

#include <algorithm>
#include <cerrno>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace brook {

namespace {

// Waits are cut into slices this long so a stopping server is noticed.
constexpr int kSliceMs = 200;

void addressOf(const sockaddr_storage& addr, std::string& ip, int& port)
{
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
        inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
        port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
        // An IPv4 client of a dual-stack socket counts as that IPv4 address.
        if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], text, sizeof(text));
        else inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
        port = ntohs(a->sin6_port);
    }
    ip = text;
}

int pollOnce(int fd, short events, int timeoutMs)
{
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, timeoutMs);
    if (n <= 0) return n;
    return (p.revents & (events | POLLHUP | POLLERR)) ? 1 : 0;
}

}  // namespace

HttpConnection::HttpConnection(int fd, std::chrono::milliseconds writeTimeout, std::function<bool()> stopping)
    : m_fd(fd), m_writeTimeout(writeTimeout), m_stopping(std::move(stopping))
{
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) addressOf(addr, m_remoteIp, m_remotePort);
    len = sizeof(addr);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) addressOf(addr, m_localIp, m_localPort);
}

HttpConnection::~HttpConnection()
{
    ::shutdown(m_fd, SHUT_RDWR);
    ::close(m_fd);
}

HttpConnection::Wait HttpConnection::fill(size_t want, Clock::time_point deadline)
{
    char chunk[16384];
    while (m_buffer.size() < want) {
        if (m_stopping()) return Wait::Closed;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return Wait::TimedOut;
        const int ready = pollOnce(m_fd, POLLIN, int(std::min<long long>(left, kSliceMs)));
        if (ready < 0 && errno != EINTR) return Wait::Closed;
        if (ready <= 0) continue;
        const ssize_t n = ::recv(m_fd, chunk, sizeof(chunk), MSG_DONTWAIT);
        if (n == 0) return Wait::Closed;
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
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

bool HttpConnection::is_writable() const { return pollOnce(m_fd, POLLOUT, int(m_writeTimeout.count())) > 0; }

ssize_t HttpConnection::write(const char* ptr, size_t size)
{
    size_t sent = 0;
    const auto deadline = Clock::now() + m_writeTimeout;
    while (sent < size) {
        const ssize_t n = ::send(m_fd, ptr + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += size_t(n);
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0 || m_stopping()) return -1;
        if (pollOnce(m_fd, POLLOUT, int(std::min<long long>(left, kSliceMs))) < 0 && errno != EINTR) return -1;
    }
    return ssize_t(size);
}

bool HttpConnection::sendAll(const std::string& bytes)
{
    return write(bytes.data(), bytes.size()) == ssize_t(bytes.size());
}

void HttpConnection::lingeringClose()
{
    ::shutdown(m_fd, SHUT_WR);
    // Up to 1 s and 16 MiB: enough for a client to finish a rejected upload and read the answer.
    const auto deadline = Clock::now() + std::chrono::seconds(1);
    size_t drained = 0;
    char chunk[16384];
    while (drained < (16u << 20) && Clock::now() < deadline && !m_stopping()) {
        if (pollOnce(m_fd, POLLIN, kSliceMs) <= 0) continue;
        const ssize_t n = ::recv(m_fd, chunk, sizeof(chunk), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
        if (n > 0) drained += size_t(n);
    }
}

void HttpConnection::discardAvailable()
{
    char chunk[16384];
    for (int i = 0; i < 64 && ::recv(m_fd, chunk, sizeof(chunk), MSG_DONTWAIT) > 0; ++i) {}
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
