#include "server/origin_policy.h"

#include "server/socket_calls.h"

#include <algorithm>
#include <cctype>


namespace brook {

OriginPolicy::OriginPolicy(const ServeConfig& config)
    : m_allowed(config.allowedOrigins), m_hasApiKey(!config.apiKey.empty()), m_checkHost(isLoopbackHost(config.host))
{
    m_any = std::find(m_allowed.begin(), m_allowed.end(), "*") != m_allowed.end();
}

std::optional<std::string> OriginPolicy::corsOrigin(const std::string& origin) const
{
    if (m_any) return std::string("*");
    if (std::find(m_allowed.begin(), m_allowed.end(), origin) != m_allowed.end()) return origin;
    return std::nullopt;
}

bool OriginPolicy::isLocalHostName(const std::string& hostHeader)
{
    std::string host = hostHeader;
    std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    auto validPort = [](const std::string& port) {
        return port.size() <= 5 &&
               std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); });
    };
    if (!host.empty() && host.front() == '[') {
        const size_t close = host.find(']');
        if (close == std::string::npos) return false;
        const std::string rest = host.substr(close + 1);
        if (!rest.empty() && (rest.front() != ':' || !validPort(rest.substr(1)))) return false;
        return net::isAddressLiteral(host.substr(1, close - 1), true);
    }
    const size_t colon = host.find(':');
    if (colon != std::string::npos) {
        if (!validPort(host.substr(colon + 1))) return false;
        host.resize(colon);
    }
    if (!host.empty() && host.back() == '.') host.pop_back();  // "localhost." is the same name
    if (host == "localhost") return true;
    const std::string suffix = ".localhost";  // RFC 6761: always this machine
    if (host.size() > suffix.size() && host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0)
        return true;
    return net::isAddressLiteral(host, false);
}

}  // namespace brook
