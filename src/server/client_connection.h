// ClientConnection: notices that an HTTP client went away while its request is still being
// generated, so the request is aborted at once (vLLM's behaviour) instead of after the next failed
// write. cpp-httplib 0.11 does not hand handlers their socket, so the socket is found once by its
// TCP 4-tuple among the process's descriptors, unless the guarded server has said which socket it
// is (CurrentConnection); it stays open for as long as the handler runs.
// Then poll(POLLRDHUP) tells whether the peer has closed. Linux only; elsewhere (or when the
// socket cannot be found) it reports "connected" and write failures remain the signal.
// One per request, used by the handler's thread.
#pragma once

#include <httplib.h>

#include <string>

namespace brook {

class ClientConnection {
public:
    // Finds the socket by its 4-tuple (a scan of every descriptor: only for servers that do not
    // say which socket a request came on).
    ClientConnection(const std::string& remoteAddr, int remotePort, const std::string& localAddr, int localPort);
    // The socket is known (GuardedHttpServer publishes it): no scan.
    explicit ClientConnection(socket_t socket);

    // True once the client has closed (or reset) its side of the connection.
    bool closed() const;
    bool found() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

}  // namespace brook
