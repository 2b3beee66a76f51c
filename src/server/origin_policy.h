// OriginPolicy: which browsers may use the server. Browsers are the one client that a stranger
// can point at a local server (a web page's script), so:
//  - CORS is off unless --allowed-origins names the origin (or '*'): the default is not '*'.
//  - Without --api-key, a request carrying an Origin that is not allowed is refused (403): a
//    page cannot even fire generation requests it is not meant to read. Clients without an
//    Origin (curl, the SDKs) are not browsers and are not affected.
//  - Bound to loopback, the Host header must name this machine (localhost, *.localhost or an IP
//    literal): a DNS-rebinding page reaches 127.0.0.1 under its own host name and is refused.
// Immutable after construction; thread-safe.
#pragma once

#include "server/serve_config.h"

#include <optional>
#include <string>

namespace brook {

class OriginPolicy {
public:
    explicit OriginPolicy(const ServeConfig& config);

    // The Access-Control-Allow-Origin value for `origin` ("*" or the origin), or none.
    std::optional<std::string> corsOrigin(const std::string& origin) const;
    // Whether a non-preflight request from `origin` is refused outright.
    bool refusesOrigin(const std::string& origin) const { return !m_hasApiKey && !corsOrigin(origin); }
    // Whether the Host header is acceptable (always, unless bound to loopback).
    bool acceptsHost(const std::string& host) const { return !m_checkHost || isLocalHostName(host); }

    // localhost, *.localhost, an IPv4 literal or a bracketed IPv6 literal, each with any port.
    static bool isLocalHostName(const std::string& host);

private:
    std::vector<std::string> m_allowed;
    bool m_any = false;
    bool m_hasApiKey = false;
    bool m_checkHost = false;
};

}  // namespace brook
