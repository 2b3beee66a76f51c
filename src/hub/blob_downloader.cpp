#include "hub/blob_downloader.h"

#include "hub/content_headers.h"
#include "hub/hub_http.h"
#include "hub/sha1.h"
#include "hub/sha256.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <system_error>
#include <vector>

namespace brook {

namespace fs = std::filesystem;

namespace {

std::string incompletePath(const fs::path& destination) { return destination.string() + ".incomplete"; }

// How one GET (after redirects) ended. `status` is the final HTTP status when a body came.
struct Attempt {
    int status = 0;
    bool transportError = false;  // retry from where it stopped
    bool restart = false;         // the partial file cannot be continued: retry from byte 0
    bool fatal = false;           // the server's answer is unusable: stop, drop the partial file
    bool cancelled = false;
    std::string message;
};

// The state one file's download carries across attempts.
struct Partial {
    int64_t have = 0;  // bytes in the partial file, all hashed into sha
    Sha256 sha;
    int64_t total = -1;  // for progress
    void reset()
    {
        have = 0;
        sha = Sha256();
    }
};

Attempt fetchOnce(const BlobRequest& request, Partial& partial, const BlobProgress& progress)
{
    Attempt attempt;
    auto first = BlobDownloader::splitUrl(request.url);
    if (!first) {
        attempt.fatal = true;
        attempt.message = first.error();
        return attempt;
    }
    std::string url = request.url;
    bool tokenAllowed = !request.token.empty();
    for (int hop = 0; hop <= HubHttp::kMaxRedirects; ++hop) {
        auto parts = BlobDownloader::splitUrl(url);
        if (!parts) {
            attempt.fatal = true;
            attempt.message = "bad redirect: " + parts.error();
            return attempt;
        }
        tokenAllowed = tokenAllowed && HubHttp::sameOrigin(*first, *parts);
        httplib::Client client(parts->schemeHostPort);
        client.set_connection_timeout(request.connectTimeoutSeconds, 0);
        client.set_read_timeout(request.readTimeoutSeconds, 0);
        client.set_follow_location(false);
        // A cancel shuts the connection, so a stalled server cannot hold the download. (A cancel
        // between this check and the request's start is noticed at the next bytes or timeout.)
        const CancelSignal::Scope stopScope = stopOnCancel(request.cancel, client);
        if (request.cancel && request.cancel->cancelled()) {
            attempt.cancelled = true;
            attempt.message = "download cancelled";
            return attempt;
        }
        httplib::Headers headers{{"User-Agent", "brook/" BROOK_VERSION}};
        if (tokenAllowed) headers.emplace("Authorization", "Bearer " + request.token);
        if (partial.have > 0) headers.emplace("Range", "bytes=" + std::to_string(partial.have) + "-");

        std::ofstream out;
        int status = 0;
        std::string location;
        bool writeFailed = false;
        // Fails this attempt from inside a callback (returning false stops cpp-httplib).
        auto fail = [&](std::string message) {
            attempt.fatal = true;
            attempt.message = std::move(message) + " (" + url + ")";
            return false;
        };
        auto result = client.Get(
            parts->path, headers,
            [&](const httplib::Response& response) {
                status = response.status;
                if (status >= 300 && status < 400) {
                    location = response.get_header_value("Location");
                    return false;  // no body wanted; follow below
                }
                if (status != 200 && status != 206) return false;
                if (status == 200 && partial.have > 0) partial.reset();  // the server ignored the Range: start over
                if (status == 206 && response.has_header("Content-Range")) {
                    const std::string text = response.get_header_value("Content-Range");
                    const auto range = parseContentRange(text);
                    if (!range) return fail("malformed Content-Range '" + text + "'");
                    if (range->first == 0 && partial.have > 0) {
                        partial.reset();  // the file from its start, whatever was asked: take it whole
                    } else if (range->first != partial.have) {
                        attempt.restart = true;
                        attempt.message = "the server sent bytes from " + std::to_string(range->first) + ", not " +
                                          std::to_string(partial.have) + " (" + url + ")";
                        return false;
                    }
                } else if (status == 206 && partial.have > 0) {
                    attempt.restart = true;  // no Content-Range: where the bytes belong is unknown
                    attempt.message = "a 206 answer without Content-Range (" + url + ")";
                    return false;
                }
                if (response.has_header("Content-Length")) {
                    const std::string text = response.get_header_value("Content-Length");
                    const auto length = parseContentLength(text);
                    if (!length) return fail("malformed Content-Length '" + text + "'");
                    if (request.expectedSize >= 0 && *length > request.expectedSize - partial.have)
                        return fail("the server announces " + std::to_string(*length) + " more bytes after " +
                                    std::to_string(partial.have) + ", but the file has " +
                                    std::to_string(request.expectedSize));
                    partial.total = partial.have + *length;
                }
                out.open(incompletePath(request.destination),
                         partial.have > 0 ? std::ios::binary | std::ios::app : std::ios::binary | std::ios::trunc);
                return bool(out);
            },
            [&](const char* data, size_t length) {
                if (request.expectedSize >= 0 && int64_t(length) > request.expectedSize - partial.have)
                    return fail("the server sent more than the file's " + std::to_string(request.expectedSize) +
                                " bytes");
                out.write(data, std::streamsize(length));
                if (!out) {
                    writeFailed = true;
                    return false;
                }
                partial.sha.update(data, length);
                partial.have += int64_t(length);
                if (progress && !progress(partial.have, partial.total)) {
                    attempt.cancelled = true;
                    return false;
                }
                return true;
            });
        out.close();
        if (request.cancel && request.cancel->cancelled()) attempt.cancelled = true;  // the shut socket's error is ours
        if (attempt.cancelled) {
            attempt.message = "download cancelled";
            return attempt;
        }
        if (attempt.fatal || attempt.restart) return attempt;
        if (writeFailed) {
            attempt.fatal = true;
            attempt.message = "cannot write " + incompletePath(request.destination);
            return attempt;
        }
        if (!location.empty()) {
            auto next = HubHttp::resolveLocation(url, location);
            if (!next) {
                attempt.fatal = true;
                attempt.message = next.error() + " (from " + url + ")";
                return attempt;
            }
            url = *next;
            continue;
        }
        if (!result && status == 0) {
            attempt.transportError = true;
            attempt.message = httplib::to_string(result.error()) + " while fetching " + url;
            return attempt;
        }
        attempt.status = status;
        if (!result && (status == 200 || status == 206)) {
            // The body stopped half-way (connection dropped): retry from where it stopped.
            attempt.transportError = true;
            attempt.message =
                httplib::to_string(result.error()) + " after " + std::to_string(partial.have) + " bytes of " + url;
        }
        return attempt;
    }
    attempt.fatal = true;
    attempt.message = "too many redirects fetching " + request.url;
    return attempt;
}

// Hashes what an earlier run left in the partial file so the download can continue it.
void loadPartial(const BlobRequest& request, Partial& partial)
{
    std::error_code ec;
    const fs::path path = incompletePath(request.destination);
    if (!fs::exists(path, ec)) return;
    partial.have = int64_t(fs::file_size(path, ec));
    if (ec || (request.expectedSize >= 0 && partial.have > request.expectedSize)) {
        fs::remove(path, ec);
        partial.reset();
        return;
    }
    if (partial.have == 0) return;
    std::ifstream in(path, std::ios::binary);
    std::vector<char> buffer(1 << 20);
    int64_t hashed = 0;
    while (in && hashed < partial.have) {
        in.read(buffer.data(), std::streamsize(std::min<int64_t>(int64_t(buffer.size()), partial.have - hashed)));
        partial.sha.update(buffer.data(), size_t(in.gcount()));
        hashed += in.gcount();
    }
    if (hashed != partial.have) {
        fs::remove(path, ec);
        partial.reset();
    } else {
        spdlog::info("resuming {} at {} bytes", request.destination.filename().string(), partial.have);
    }
}

struct Outcome {
    Result<void> result;
    bool contentMismatch = false;  // the bytes did not pass their check (the partial file is gone)
};

Outcome fetchAndCheck(const BlobRequest& request, const BlobProgress& progress, Partial& partial)
{
    std::error_code ec;
    const fs::path path = incompletePath(request.destination);
    const auto dropPartial = [&] {
        fs::remove(path, ec);
        partial.reset();
    };
    partial.total = request.expectedSize;
    const bool alreadyComplete = request.expectedSize >= 0 && partial.have == request.expectedSize && partial.have > 0;
    std::string lastError;
    for (int attempt = 0; !alreadyComplete && attempt <= request.maxRetries; ++attempt) {
        Attempt a = fetchOnce(request, partial, progress);
        if (a.cancelled) return {makeError(a.message)};
        if (a.fatal) {
            dropPartial();  // written under an answer we refuse: never resume from it
            return {makeError(a.message)};
        }
        if (a.restart) {
            spdlog::warn("cannot continue {} ({}); starting it over", request.destination.filename().string(),
                         a.message);
            dropPartial();
            lastError = a.message;
            continue;
        }
        if (a.transportError) {
            lastError = a.message;
            spdlog::warn("download of {} interrupted ({}); retrying from byte {}", request.url, a.message,
                         partial.have);
            continue;
        }
        if (a.status == 416 && request.expectedSize >= 0 && partial.have == request.expectedSize) break;
        if (a.status == 416) {  // our partial file does not fit the remote one: start over
            dropPartial();
            lastError = "HTTP 416 for " + request.url;
            continue;
        }
        if (a.status == 401 || a.status == 403)
            return {makeError("HTTP " + std::to_string(a.status) + " for " + request.url +
                              ": access denied (gated or private repository? set HF_TOKEN)")};
        if (a.status == 404) return {makeError("HTTP 404: " + request.url + " not found")};
        if (a.status != 200 && a.status != 206)
            return {
                makeError(a.message.empty() ? "HTTP " + std::to_string(a.status) + " for " + request.url : a.message)};
        lastError.clear();
        break;
    }
    if (!lastError.empty()) return {makeError(lastError)};

    const std::string name = request.destination.filename().string();
    if (request.expectedSize >= 0 && partial.have != request.expectedSize) {
        dropPartial();
        return {makeError(name + ": downloaded " + std::to_string(partial.have) + " bytes, expected " +
                          std::to_string(request.expectedSize)),
                true};
    }
    if (!fs::exists(path, ec)) std::ofstream(path, std::ios::binary).flush();  // an empty file
    if (!request.expectedSha256.empty()) {
        const std::string digest = partial.sha.hexDigest();
        if (digest != request.expectedSha256) {
            dropPartial();  // corrupt: do not resume from it
            return {makeError(name + ": sha256 " + digest + " does not match the hub's " + request.expectedSha256 +
                              " (the file was removed; try again)"),
                    true};
        }
    }
    if (!request.expectedGitBlobId.empty()) {
        const auto id = Sha1::gitBlobIdOfFile(path);
        if (!id || *id != request.expectedGitBlobId) {
            dropPartial();
            return {makeError(name + ": git blob id " + id.value_or("(unreadable)") + " does not match the hub's " +
                              request.expectedGitBlobId + " (the file was removed; try again)"),
                    true};
        }
    }
    fs::rename(path, request.destination, ec);
    if (ec) return {makeError("cannot move " + path.string() + " into place: " + ec.message())};
    return {Result<void>()};
}

}  // namespace

Result<BlobDownloader::UrlParts> BlobDownloader::splitUrl(const std::string& url)
{
    const size_t schemeEnd = url.find("://");
    if (schemeEnd == std::string::npos) return makeError("'" + url + "' is not an http(s) URL");
    UrlParts parts;
    parts.scheme = url.substr(0, schemeEnd);
    if (parts.scheme != "http" && parts.scheme != "https")
        return makeError("'" + url + "': unsupported scheme " + parts.scheme);
    const size_t hostStart = schemeEnd + 3;
    const size_t pathStart = url.find_first_of("/?#", hostStart);
    const std::string hostPort =
        url.substr(hostStart, pathStart == std::string::npos ? std::string::npos : pathStart - hostStart);
    if (hostPort.empty()) return makeError("'" + url + "' has no host");
    if (hostPort.find('@') != std::string::npos) return makeError("'" + url + "' carries a user name");
    // "host", "host:port", "[v6]" or "[v6]:port".
    const size_t close = hostPort.front() == '[' ? hostPort.find(']') : std::string::npos;
    if (hostPort.front() == '[' && close == std::string::npos) return makeError("'" + url + "' has a malformed host");
    const size_t colon = hostPort.find(':', close == std::string::npos ? 0 : close);
    parts.host = hostPort.substr(0, colon);
    if (parts.host.empty() || (close != std::string::npos && close + 1 != hostPort.size() && close + 1 != colon))
        return makeError("'" + url + "' has a malformed host");
    parts.port = parts.scheme == "https" ? 443 : 80;
    if (colon != std::string::npos) {
        const std::string port = hostPort.substr(colon + 1);
        if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(port) < 1 || std::stoi(port) > 65535)
            return makeError("'" + url + "' has a malformed port");
        parts.port = std::stoi(port);
    }
    parts.schemeHostPort = parts.scheme + "://" + hostPort;
    std::string path = pathStart == std::string::npos ? "/" : url.substr(pathStart);
    path = path.substr(0, path.find('#'));  // fragments never reach the server
    if (path.empty() || path.front() != '/') path.insert(0, "/");
    parts.path = path;
    return parts;
}

Result<void> BlobDownloader::download(const BlobRequest& request, const BlobProgress& progress)
{
    std::error_code ec;
    fs::create_directories(request.destination.parent_path(), ec);
    if (ec) return makeError("cannot create " + request.destination.parent_path().string() + ": " + ec.message());

    Partial partial;
    loadPartial(request, partial);
    const bool resumed = partial.have > 0;
    Outcome outcome = fetchAndCheck(request, progress, partial);
    if (outcome.contentMismatch && resumed) {
        // What an earlier run left was not the start of this file: fetch it whole, once.
        spdlog::warn("{} ({}); fetching it again from the start", request.destination.filename().string(),
                     outcome.result.error());
        partial.reset();
        outcome = fetchAndCheck(request, progress, partial);
    }
    return std::move(outcome.result);
}

}  // namespace brook
