// BlobDownloader: fetches one URL into a file, resuming a partial download with an HTTP Range
// request, following redirects by hand (the token only while every hop stays on the first URL's
// scheme, host and port: hub_http.h), checking the size and the sha256 or git blob id when known.
// Nothing the server says is trusted: a malformed Content-Length or Content-Range fails the
// attempt, a 206 must start where the partial file ends (else the file starts over from 0), a
// body longer than the expected size stops, and a resumed file that fails its check is fetched
// once more from byte 0, so a stale partial file cannot poison the cache.
// Used by HubClient and ModelScopeClient; stateless, so separate downloads may run in parallel.
#pragma once

#include "engine/result.h"
#include "hub/cancel_signal.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace brook {

struct BlobRequest {
    std::string url;                    // absolute http(s) URL
    std::string token;                  // bearer token for the first host only; empty: none
    std::filesystem::path destination;  // written as destination + ".incomplete", then renamed
    int64_t expectedSize = -1;          // -1: unknown
    std::string expectedSha256;         // empty: not checked
    std::string expectedGitBlobId;      // git's id of the content (non-LFS hub files); empty: not checked
    int connectTimeoutSeconds = 10;
    int readTimeoutSeconds = 60;
    int maxRetries = 3;
    std::shared_ptr<CancelSignal> cancel;  // may be null; cancels a read blocked on a silent server too
};

// bytesDone / bytesTotal (-1 when unknown); return false to cancel.
using BlobProgress = std::function<bool(int64_t bytesDone, int64_t bytesTotal)>;

class BlobDownloader {
public:
    static Result<void> download(const BlobRequest& request, const BlobProgress& progress = {});

    struct UrlParts {
        std::string schemeHostPort;  // "https://huggingface.co:443" style prefix httplib takes
        std::string scheme;          // "http" or "https"
        std::string host;            // without the port; IPv6 addresses keep their brackets
        int port = 0;                // the explicit port, else the scheme's (80, 443)
        std::string path;            // with query, starting with '/'
    };
    // Splits an absolute http(s) URL; an error when it is not one (or its port is not 1-65535).
    static Result<UrlParts> splitUrl(const std::string& url);
};

}  // namespace brook
