// HttpConnection: one accepted client socket, read through a buffer with deadlines, for the
// guarded HTTP server. Reading ahead into the buffer is what keeps pipelined requests apart: the
// bytes of the next request stay here until the current one is answered. cpp-httplib's request
// processing reads one request that RequestReader has already taken in whole (setRequest), so it
// never waits on the network itself; its answer goes straight to the socket.
// Used by one worker thread at a time; not thread-safe.
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <string>

namespace brook {

class HttpConnection : public httplib::Stream {
public:
    using Clock = std::chrono::steady_clock;

    // Takes ownership of `socket` (closed by the destructor). `stopping` is polled while waiting so
    // stop() never waits for a slow client.
    HttpConnection(socket_t socket, std::chrono::milliseconds writeTimeout, std::function<bool()> stopping);
    ~HttpConnection() override;
    HttpConnection(const HttpConnection&) = delete;
    HttpConnection& operator=(const HttpConnection&) = delete;

    enum class Wait { Ready, Closed, TimedOut };
    // Waits until buffered() holds at least `want` bytes, the peer closes, or `deadline` passes.
    Wait fill(size_t want, Clock::time_point deadline);
    const std::string& buffered() const { return m_buffer; }
    void consume(size_t n) { m_buffer.erase(0, n); }

    // What cpp-httplib's read() serves: exactly one request, then end of stream.
    void setRequest(std::string bytes);
    // Sends everything or fails (write timeout, peer gone).
    bool sendAll(const std::string& bytes);
    // Half-closes and reads what the client still sends (bounded), so an early error answer is
    // not lost to a reset while the client is still uploading.
    void lingeringClose();
    // Reads and drops what has already arrived, without waiting, so closing does not reset.
    void discardAvailable();

    const std::string& remoteIp() const { return m_remoteIp; }

    // httplib::Stream
    bool is_readable() const override { return m_served < m_request.size(); }
    bool is_writable() const override;
    ssize_t read(char* ptr, size_t size) override;
    ssize_t write(const char* ptr, size_t size) override;
    void get_remote_ip_and_port(std::string& ip, int& port) const override;
    void get_local_ip_and_port(std::string& ip, int& port) const override;
    socket_t socket() const override { return m_socket; }

private:
    socket_t m_socket;
    std::chrono::milliseconds m_writeTimeout;
    std::function<bool()> m_stopping;
    std::string m_buffer;   // received, not yet taken by a request
    std::string m_request;  // the request cpp-httplib is reading
    size_t m_served = 0;
    std::string m_remoteIp, m_localIp;
    int m_remotePort = -1, m_localPort = -1;
};

}  // namespace brook
