#include "server/client_connection.h"

#ifdef __linux__
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#endif

namespace brook {

#ifdef __linux__
namespace {

bool sameEndpoint(const sockaddr_storage& address, const std::string& host, int port)
{
    char text[INET6_ADDRSTRLEN] = {};
    int actualPort = -1;
    if (address.ss_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
        actualPort = ntohs(in->sin_port);
    } else if (address.ss_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
        inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
        actualPort = ntohs(in6->sin6_port);
    } else {
        return false;
    }
    return actualPort == port && host == text;
}

}  // namespace
#endif

ClientConnection::ClientConnection(const std::string& remoteAddr, int remotePort, const std::string& localAddr,
                                   int localPort)
{
#ifdef __linux__
    if (remotePort < 0 || localPort < 0) return;
    DIR* dir = opendir("/proc/self/fd");
    if (!dir) return;
    while (dirent* entry = readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0' || fd == dirfd(dir)) continue;
        struct stat st {};
        if (fstat(int(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        sockaddr_storage peer{}, local{};
        socklen_t peerLength = sizeof peer, localLength = sizeof local;
        if (getpeername(int(fd), reinterpret_cast<sockaddr*>(&peer), &peerLength) != 0) continue;
        if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&local), &localLength) != 0) continue;
        if (sameEndpoint(peer, remoteAddr, remotePort) && sameEndpoint(local, localAddr, localPort)) {
            m_fd = int(fd);
            break;
        }
    }
    closedir(dir);
#else
    (void)remoteAddr, (void)remotePort, (void)localAddr, (void)localPort;
#endif
}

ClientConnection::ClientConnection(socket_t socket)
{
#ifdef __linux__
    m_fd = int(socket);
#else
    (void)socket;
#endif
}

bool ClientConnection::closed() const
{
#ifdef __linux__
    if (m_fd < 0) return false;
    pollfd p{m_fd, short(POLLRDHUP), 0};
    if (poll(&p, 1, 0) <= 0) return false;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
#else
    return false;
#endif
}

}  // namespace brook
