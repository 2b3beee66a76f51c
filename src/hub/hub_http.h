// HubHttp: the redirect rules both hub clients follow, and the GET that fetches a listing.
// Redirects are followed by hand, at most kMaxRedirects, because cpp-httplib's own following
// re-sends every header, the token included, to wherever a Location points. The token goes only
// to the origin (scheme, host and port) the request started at, and only while every hop so far
// stayed there, as requests' should_strip_auth (and so huggingface_hub) does. Listing bodies are
// capped (kMaxListingBytes) so a hostile server cannot fill memory. Thread-safe (no state).
#pragma once

#include "engine/result.h"
#include "hub/blob_downloader.h"

#include <cstddef>
#include <memory>
#include <string>

namespace brook {

struct HttpTextReply {
    int status = 0;
    std::string body;
    std::string url;  // after redirects
};

struct HttpGetOptions {
    std::string token;  // "Authorization: Bearer"; empty: none
    int connectTimeoutSeconds = 10;
    int readTimeoutSeconds = 60;
    std::shared_ptr<CancelSignal> cancel;  // may be null
};

class HubHttp {
public:
    static constexpr int kMaxRedirects = 10;
    static constexpr size_t kMaxListingBytes = size_t(64) << 20;

    // Whether two URLs share scheme, host (case-insensitively) and port.
    static bool sameOrigin(const BlobDownloader::UrlParts& a, const BlobDownloader::UrlParts& b);
    // The absolute URL a Location header points to, seen from `from`: absolute, "//host/path",
    // "/path", "?query" or a path relative to from's folder. Errors for other schemes.
    static Result<std::string> resolveLocation(const std::string& from, const std::string& location);
    // GETs `url` into memory, following redirects as above. Transport failures are errors with
    // ErrorCode::Unreachable, a body over kMaxListingBytes one starting "too large"; HTTP errors
    // are replies.
    static Result<HttpTextReply> getText(const std::string& url, const HttpGetOptions& options);
};

}  // namespace brook
