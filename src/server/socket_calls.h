// The few socket calls the server makes itself, the same on POSIX and Winsock: readiness polls,
// non-blocking send/receive (MSG_DONTWAIT and MSG_NOSIGNAL are POSIX-only; a Windows socket is
// switched to non-blocking mode once instead, and Windows has no SIGPIPE), half-close, close, and
// address text. Sockets are cpp-httplib's socket_t (int on POSIX, SOCKET on Windows).
#pragma once

#include <httplib.h>

#include <cstddef>
#include <string>

namespace brook::net {

enum class Ready { Yes, No, Error };
// Waits up to timeoutMs for `forWrite` ? writable : readable (a hang-up or error counts as ready,
// so the next call reports it).
Ready waitReady(socket_t socket, bool forWrite, int timeoutMs);

// Makes recvNow/sendNow non-blocking where a flag cannot (Windows); a no-op elsewhere.
void prepareNonBlocking(socket_t socket);
// > 0: bytes moved; 0 (receive only): the peer closed; < 0: see retryLater().
std::ptrdiff_t recvNow(socket_t socket, char* buffer, size_t size);
std::ptrdiff_t sendNow(socket_t socket, const char* buffer, size_t size);
// After a failed recvNow/sendNow/waitReady: true when the call would have blocked or was
// interrupted, false when the connection is broken.
bool retryLater();

void shutdownWrite(socket_t socket);
void closeSocket(socket_t socket);  // shuts both directions down first

// The socket's peer or local address ("" and -1 when unknown). An IPv4 client of a dual-stack
// socket counts as that IPv4 address.
void peerAddress(socket_t socket, std::string& ip, int& port);
void localAddress(socket_t socket, std::string& ip, int& port);

// inet_pton for AF_INET (false) or AF_INET6 (true): is `text` a literal address of that family?
bool isAddressLiteral(const std::string& text, bool ipv6);

// Turns Nagle's algorithm off on a connected TCP socket, so each small write (an SSE event) goes
// out at once instead of waiting for the peer's delayed ACK of the previous one. False: not set.
bool setNoDelay(socket_t socket);
bool noDelay(socket_t socket);  // whether TCP_NODELAY is on

// Raises a listening socket's accept backlog; returns "" or why it could not.
std::string setListenBacklog(socket_t socket, int backlog);

}  // namespace brook::net
