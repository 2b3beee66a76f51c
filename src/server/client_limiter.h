// ClientLimiter: how many places (slow connections, see GuardedHttpServer) each client address
// holds, so one client (a slow header sender, a runaway script) cannot take every HTTP thread:
// past its cap a connection is refused and the rest of the pool stays free for others.
// Thread-safe.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace brook {

class ClientLimiter {
public:
    explicit ClientLimiter(int maxPerClient) : m_max(maxPerClient) {}

    // Held for a connection's lifetime; releases its place when destroyed.
    class Slot {
    public:
        Slot(ClientLimiter& limiter, std::string client) : m_limiter(&limiter), m_client(std::move(client)) {}
        Slot(Slot&& other) noexcept : m_limiter(other.m_limiter), m_client(std::move(other.m_client))
        {
            other.m_limiter = nullptr;
        }
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
        Slot& operator=(Slot&& other) noexcept
        {
            if (this != &other) {
                if (m_limiter) m_limiter->release(m_client);
                m_limiter = std::exchange(other.m_limiter, nullptr);
                m_client = std::move(other.m_client);
            }
            return *this;
        }
        ~Slot()
        {
            if (m_limiter) m_limiter->release(m_client);
        }

    private:
        ClientLimiter* m_limiter;
        std::string m_client;
    };

    // A place for one more connection of `client`, or nothing when it already holds its cap.
    std::optional<Slot> tryAcquire(const std::string& client);
    int maxPerClient() const { return m_max; }

private:
    void release(const std::string& client);

    const int m_max;
    std::mutex m_mutex;
    std::unordered_map<std::string, int> m_open;
};

}  // namespace brook
