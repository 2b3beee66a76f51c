// BlobDownloader: fetches one URL into a file, resuming a partial download with an HTTP Range
// request, following redirects (dropping the Authorization header when the host changes, as
// huggingface_hub does, so presigned CDN URLs work), checking the size and the sha256 when known.
// Used by HubClient; one instance per download; not thread-safe.
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace brook {

struct BlobRequest {
    std::string url;                     // absolute http(s) URL
    std::string token;                   // bearer token for the first host only; empty: none
    std::filesystem::path destination;   // written as destination + ".incomplete", then renamed
    int64_t expectedSize = -1;           // -1: unknown
    std::string expectedSha256;          // empty: not checked
    int connectTimeoutSeconds = 10;
    int readTimeoutSeconds = 60;
    int maxRetries = 3;
};

// bytesDone / bytesTotal (-1 when unknown); return false to cancel.
using BlobProgress = std::function<bool(int64_t bytesDone, int64_t bytesTotal)>;

class BlobDownloader {
public:
    static Result<void> download(const BlobRequest& request, const BlobProgress& progress = {});

    struct UrlParts {
        std::string schemeHostPort;  // "https://huggingface.co:443" style prefix httplib takes
        std::string host;
        std::string path;            // with query, starting with '/'
    };
    // Splits an absolute http(s) URL; nullopt-like error when it is not one.
    static Result<UrlParts> splitUrl(const std::string& url);
};

} // namespace brook
