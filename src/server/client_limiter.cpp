#include "server/client_limiter.h"

namespace brook {

std::optional<ClientLimiter::Slot> ClientLimiter::tryAcquire(const std::string& client)
{
    std::lock_guard lock(m_mutex);
    int& open = m_open[client];
    if (open >= m_max) {
        if (open == 0) m_open.erase(client);
        return std::nullopt;
    }
    ++open;
    return Slot(*this, client);
}

void ClientLimiter::release(const std::string& client)
{
    std::lock_guard lock(m_mutex);
    auto it = m_open.find(client);
    if (it != m_open.end() && --it->second <= 0) m_open.erase(it);
}

}  // namespace brook
