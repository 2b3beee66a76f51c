// RawHttp: a bare socket client for the server tests that need what HTTP libraries never send:
// pipelined requests, HTTP/1.0, a head that never ends, broken framing, or a connection from
// another loopback address (127.0.0.2) so it counts as another client.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace brook::testsupport {

class RawSocket {
public:
    explicit RawSocket(int port, const char* sourceIp = nullptr)
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        if (m_fd < 0) return;
        if (sourceIp) {
            sockaddr_in local{};
            local.sin_family = AF_INET;
            inet_pton(AF_INET, sourceIp, &local.sin_addr);
            if (::bind(m_fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
                close();
                return;
            }
        }
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(uint16_t(port));
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
        if (::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) close();
    }
    ~RawSocket() { close(); }
    RawSocket(const RawSocket&) = delete;
    RawSocket& operator=(const RawSocket&) = delete;
    RawSocket(RawSocket&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }

    bool ok() const { return m_fd >= 0; }
    int fd() const { return m_fd; }

    bool send(const std::string& bytes)
    {
        size_t sent = 0;
        while (m_fd >= 0 && sent < bytes.size()) {
            const ssize_t n = ::send(m_fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return false;
            sent += size_t(n);
        }
        return m_fd >= 0;
    }

    // Everything the server sends until it closes the connection or `timeout` passes.
    std::string readUntilClosed(std::chrono::milliseconds timeout)
    {
        std::string out;
        const auto until = std::chrono::steady_clock::now() + timeout;
        char chunk[16384];
        while (m_fd >= 0) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
            if (left.count() <= 0) break;
            pollfd p{m_fd, POLLIN, 0};
            if (::poll(&p, 1, int(left.count())) <= 0) break;
            const ssize_t n = ::recv(m_fd, chunk, sizeof(chunk), 0);
            if (n <= 0) break;
            out.append(chunk, size_t(n));
        }
        return out;
    }

    void close()
    {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
    }

private:
    int m_fd = -1;
};

// The status code of the first response in `text` ("HTTP/1.1 408 ..." -> 408), or 0.
inline int statusOf(const std::string& text, size_t from = 0)
{
    const size_t at = text.find("HTTP/1.", from);
    if (at == std::string::npos || at + 12 > text.size()) return 0;
    return std::atoi(text.c_str() + at + 9);
}

// How many responses `text` holds (status lines; a body may end without a line break, so the
// next status line can follow it directly).
inline int countResponses(const std::string& text)
{
    int n = 0;
    for (size_t at = text.find("HTTP/1.1 "); at != std::string::npos; at = text.find("HTTP/1.1 ", at + 1)) ++n;
    return n;
}

// The head of the first response, up to its blank line.
inline std::string headOf(const std::string& text) { return text.substr(0, text.find("\r\n\r\n")); }
inline std::string bodyOf(const std::string& text)
{
    const size_t end = text.find("\r\n\r\n");
    return end == std::string::npos ? std::string() : text.substr(end + 4);
}

// Lets one test process hold a thousand sockets (and the server's side of them).
inline void raiseOpenFileLimit()
{
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

}  // namespace brook::testsupport
