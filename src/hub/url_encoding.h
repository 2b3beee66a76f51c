// Percent-encoding for URL path segments and query values, shared by the hub clients.
#pragma once

#include <cctype>
#include <string>

namespace brook {

// Encodes every byte but RFC 3986's unreserved characters (so '/' becomes %2F).
inline std::string percentEncode(const std::string& text)
{
    static const char* kHex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out.push_back(char(c));
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        }
    }
    return out;
}

}  // namespace brook
