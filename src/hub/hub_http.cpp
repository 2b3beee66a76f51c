#include "hub/hub_http.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>

namespace brook {

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

}  // namespace

bool HubHttp::sameOrigin(const BlobDownloader::UrlParts& a, const BlobDownloader::UrlParts& b)
{
    return a.scheme == b.scheme && lower(a.host) == lower(b.host) && a.port == b.port;
}

Result<std::string> HubHttp::resolveLocation(const std::string& from, const std::string& location)
{
    auto base = BlobDownloader::splitUrl(from);
    if (!base) return base.failure();
    if (location.empty()) return makeError("an empty Location");
    std::string target;
    if (const size_t colon = location.find(':'); colon != std::string::npos && location.find('/') > colon) {
        target = location;  // has a scheme; splitUrl below refuses all but http(s)
    } else if (location.rfind("//", 0) == 0) {
        target = base->scheme + ":" + location;
    } else if (location.front() == '/') {
        target = base->schemeHostPort + location;
    } else {
        const std::string path = base->path.substr(0, base->path.find('?'));
        if (location.front() == '?') target = base->schemeHostPort + path + location;
        else target = base->schemeHostPort + path.substr(0, path.rfind('/') + 1) + location;
    }
    auto parts = BlobDownloader::splitUrl(target);
    if (!parts) return makeError("bad redirect: " + parts.error());
    return target;
}

Result<HttpTextReply> HubHttp::getText(const std::string& url, const HttpGetOptions& options)
{
    auto first = BlobDownloader::splitUrl(url);
    if (!first) return first.failure();
    HttpTextReply reply;
    reply.url = url;
    bool tokenAllowed = !options.token.empty();
    for (int hop = 0; hop <= kMaxRedirects; ++hop) {
        auto parts = BlobDownloader::splitUrl(reply.url);
        if (!parts) return parts.failure();
        tokenAllowed = tokenAllowed && sameOrigin(*first, *parts);
        httplib::Client client(parts->schemeHostPort);
        client.set_connection_timeout(options.connectTimeoutSeconds, 0);
        client.set_read_timeout(options.readTimeoutSeconds, 0);
        client.set_follow_location(false);
        const CancelSignal::Scope stopScope = stopOnCancel(options.cancel, client);
        if (options.cancel && options.cancel->cancelled()) return makeError("download cancelled");
        httplib::Headers headers{{"User-Agent", "brook/" BROOK_VERSION}};
        if (tokenAllowed) headers.emplace("Authorization", "Bearer " + options.token);

        int status = 0;
        std::string location, body;
        bool tooLarge = false;
        auto result = client.Get(
            parts->path, headers,
            [&](const httplib::Response& response) {
                status = response.status;
                if (status >= 300 && status < 400 && response.has_header("Location")) {
                    location = response.get_header_value("Location");
                    return false;  // the body of a redirect is not wanted
                }
                return true;
            },
            [&](const char* data, size_t length) {
                if (body.size() + length > kMaxListingBytes) {
                    tooLarge = true;
                    return false;
                }
                body.append(data, length);
                return true;
            });
        if (options.cancel && options.cancel->cancelled()) return makeError("download cancelled");
        if (tooLarge)
            return makeError("too large: the answer from " + reply.url + " is over " +
                             std::to_string(kMaxListingBytes >> 20) + " MiB");
        if (!location.empty()) {
            auto next = resolveLocation(reply.url, location);
            if (!next) return makeError(ErrorCode::Unreachable, "", next.error() + " (from " + reply.url + ")");
            reply.url = *next;
            continue;
        }
        if (!result) return makeError(ErrorCode::Unreachable, "", httplib::to_string(result.error()));
        reply.status = status;
        reply.body = std::move(body);
        return reply;
    }
    return makeError(ErrorCode::Unreachable, "", "more than " + std::to_string(kMaxRedirects) + " redirects from " + url);
}

}  // namespace brook
