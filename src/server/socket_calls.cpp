#include "server/socket_calls.h"

#include <cerrno>
#include <cstring>

#ifndef _WIN32
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#endif
// On Windows, httplib.h has included winsock2.h and ws2tcpip.h.

namespace brook::net {

namespace {

void addressOf(const sockaddr_storage& addr, std::string& ip, int& port)
{
    char text[INET6_ADDRSTRLEN] = {};
    ip.clear();
    port = -1;
    if (addr.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
        inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
        port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
        if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], text, sizeof(text));
        else inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
        port = ntohs(a->sin6_port);
    }
    ip = text;
}

}  // namespace

#ifdef _WIN32

Ready waitReady(socket_t socket, bool forWrite, int timeoutMs)
{
    WSAPOLLFD p{};
    p.fd = socket;
    p.events = forWrite ? POLLWRNORM : POLLRDNORM;
    const int n = WSAPoll(&p, 1, timeoutMs);
    if (n < 0) return Ready::Error;
    if (n == 0) return Ready::No;
    return (p.revents & (p.events | POLLHUP | POLLERR | POLLNVAL)) ? Ready::Yes : Ready::No;
}

void prepareNonBlocking(socket_t socket)
{
    u_long on = 1;
    ioctlsocket(socket, FIONBIO, &on);
}

std::ptrdiff_t recvNow(socket_t socket, char* buffer, size_t size) { return ::recv(socket, buffer, int(size), 0); }
std::ptrdiff_t sendNow(socket_t socket, const char* buffer, size_t size)
{
    return ::send(socket, buffer, int(size), 0);
}

bool retryLater()
{
    const int error = WSAGetLastError();
    return error == WSAEWOULDBLOCK || error == WSAEINTR || error == WSAEINPROGRESS;
}

void shutdownWrite(socket_t socket) { ::shutdown(socket, SD_SEND); }

void closeSocket(socket_t socket)
{
    ::shutdown(socket, SD_BOTH);
    ::closesocket(socket);
}

std::string setListenBacklog(socket_t socket, int backlog)
{
    if (::listen(socket, backlog) != 0) return "Winsock error " + std::to_string(WSAGetLastError());
    return {};
}

#else

Ready waitReady(socket_t socket, bool forWrite, int timeoutMs)
{
    const short events = forWrite ? POLLOUT : POLLIN;
    pollfd p{socket, events, 0};
    const int n = ::poll(&p, 1, timeoutMs);
    if (n < 0) return errno == EINTR ? Ready::No : Ready::Error;
    if (n == 0) return Ready::No;
    return (p.revents & (events | POLLHUP | POLLERR | POLLNVAL)) ? Ready::Yes : Ready::No;
}

void prepareNonBlocking(socket_t) {}

std::ptrdiff_t recvNow(socket_t socket, char* buffer, size_t size)
{
    return ::recv(socket, buffer, size, MSG_DONTWAIT);
}

std::ptrdiff_t sendNow(socket_t socket, const char* buffer, size_t size)
{
    // MSG_NOSIGNAL: a client gone mid-write gives EPIPE, not a process-killing SIGPIPE.
    return ::send(socket, buffer, size, MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool retryLater() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

void shutdownWrite(socket_t socket) { ::shutdown(socket, SHUT_WR); }

void closeSocket(socket_t socket)
{
    ::shutdown(socket, SHUT_RDWR);
    ::close(socket);
}

std::string setListenBacklog(socket_t socket, int backlog)
{
    if (::listen(socket, backlog) != 0) return std::strerror(errno);
    return {};
}

#endif

void peerAddress(socket_t socket, std::string& ip, int& port)
{
    sockaddr_storage addr{};
    socklen_t length = sizeof(addr);
    if (::getpeername(socket, reinterpret_cast<sockaddr*>(&addr), &length) == 0) addressOf(addr, ip, port);
}

void localAddress(socket_t socket, std::string& ip, int& port)
{
    sockaddr_storage addr{};
    socklen_t length = sizeof(addr);
    if (::getsockname(socket, reinterpret_cast<sockaddr*>(&addr), &length) == 0) addressOf(addr, ip, port);
}

bool setNoDelay(socket_t socket)
{
    int on = 1;
    return ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const char*>(&on), sizeof(on)) == 0;
}

bool noDelay(socket_t socket)
{
    int on = 0;
    socklen_t length = sizeof(on);
    if (::getsockopt(socket, IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<char*>(&on), &length) != 0) return false;
    return on != 0;
}

bool isAddressLiteral(const std::string& text, bool ipv6)
{
    if (ipv6) {
        in6_addr addr{};
        return inet_pton(AF_INET6, text.c_str(), &addr) == 1;
    }
    in_addr addr{};
    return inet_pton(AF_INET, text.c_str(), &addr) == 1;
}

}  // namespace brook::net
