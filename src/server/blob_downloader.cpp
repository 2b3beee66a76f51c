#include "server/blob_downloader.h"

#include "server/sha256.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <system_error>

namespace brook {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxRedirects = 10;

std::string incompletePath(const fs::path& destination) { return destination.string() + ".incomplete"; }

// One GET (after redirects) appending to the partial file. Returns the final HTTP status, or an
// error for transport failures (which the caller retries).
struct Attempt {
    int status = 0;
    bool transportError = false;
    bool cancelled = false;
    std::string message;
};

Attempt fetchOnce(const BlobRequest& request, int64_t& have, Sha256& sha, const BlobProgress& progress,
                  int64_t& total)
{
    Attempt attempt;
    std::string url = request.url;
    auto first = BlobDownloader::splitUrl(url);
    if (!first) {
        attempt.message = first.error();
        return attempt;
    }
    const std::string firstHost = first->host;
    for (int hop = 0; hop <= kMaxRedirects; ++hop) {
        auto parts = BlobDownloader::splitUrl(url);
        if (!parts) {
            attempt.message = "bad redirect: " + parts.error();
            return attempt;
        }
        httplib::Client client(parts->schemeHostPort);
        client.set_connection_timeout(request.connectTimeoutSeconds, 0);
        client.set_read_timeout(request.readTimeoutSeconds, 0);
        client.set_follow_location(false);
        httplib::Headers headers{{"User-Agent", "brook/" BROOK_VERSION}};
        if (!request.token.empty() && parts->host == firstHost)
            headers.emplace("Authorization", "Bearer " + request.token);
        if (have > 0) headers.emplace("Range", "bytes=" + std::to_string(have) + "-");

        std::ofstream out;
        int status = 0;
        std::string location;
        bool writeFailed = false;
        auto result = client.Get(
            parts->path, headers,
            [&](const httplib::Response& response) {
                status = response.status;
                if (status >= 300 && status < 400) {
                    location = response.get_header_value("Location");
                    return false;  // no body wanted; follow below
                }
                if (status == 200 && have > 0) {
                    // The server ignored the Range: start over.
                    have = 0;
                    sha = Sha256();
                }
                if (status != 200 && status != 206) return false;
                if (response.has_header("Content-Length")) {
                    const int64_t length = std::stoll(response.get_header_value("Content-Length"));
                    total = have + length;
                }
                out.open(incompletePath(request.destination),
                         status == 206 ? std::ios::binary | std::ios::app : std::ios::binary | std::ios::trunc);
                return bool(out);
            },
            [&](const char* data, size_t length) {
                out.write(data, std::streamsize(length));
                if (!out) {
                    writeFailed = true;
                    return false;
                }
                sha.update(data, length);
                have += int64_t(length);
                if (progress && !progress(have, total)) {
                    attempt.cancelled = true;
                    return false;
                }
                return true;
            });
        out.close();
        if (writeFailed) {
            attempt.message = "cannot write " + incompletePath(request.destination);
            return attempt;
        }
        if (attempt.cancelled) {
            attempt.message = "download cancelled";
            return attempt;
        }
        if (!location.empty()) {
            if (location.rfind("http://", 0) != 0 && location.rfind("https://", 0) != 0)
                location = parts->schemeHostPort + (location.front() == '/' ? "" : "/") + location;
            url = location;
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
            attempt.message = httplib::to_string(result.error()) + " after " + std::to_string(have) + " bytes of " + url;
        }
        return attempt;
    }
    attempt.message = "too many redirects fetching " + request.url;
    return attempt;
}

} // namespace

Result<BlobDownloader::UrlParts> BlobDownloader::splitUrl(const std::string& url)
{
    const size_t schemeEnd = url.find("://");
    if (schemeEnd == std::string::npos) return makeError("'" + url + "' is not an http(s) URL");
    const std::string scheme = url.substr(0, schemeEnd);
    if (scheme != "http" && scheme != "https") return makeError("'" + url + "': unsupported scheme " + scheme);
    const size_t hostStart = schemeEnd + 3;
    const size_t pathStart = url.find('/', hostStart);
    UrlParts parts;
    const std::string hostPort = url.substr(hostStart, pathStart == std::string::npos ? std::string::npos : pathStart - hostStart);
    if (hostPort.empty()) return makeError("'" + url + "' has no host");
    parts.schemeHostPort = scheme + "://" + hostPort;
    parts.host = hostPort.substr(0, hostPort.rfind(':') == std::string::npos || hostPort.back() == ']'
                                        ? std::string::npos
                                        : hostPort.rfind(':'));
    parts.path = pathStart == std::string::npos ? "/" : url.substr(pathStart);
    return parts;
}

Result<void> BlobDownloader::download(const BlobRequest& request, const BlobProgress& progress)
{
    std::error_code ec;
    fs::create_directories(request.destination.parent_path(), ec);
    if (ec) return makeError("cannot create " + request.destination.parent_path().string() + ": " + ec.message());

    // Resume: hash what an earlier run left behind, then ask only for the rest.
    const fs::path partial = incompletePath(request.destination);
    int64_t have = 0;
    Sha256 sha;
    if (fs::exists(partial, ec)) {
        have = int64_t(fs::file_size(partial, ec));
        if (ec || (request.expectedSize >= 0 && have > request.expectedSize)) {
            fs::remove(partial, ec);
            have = 0;
        } else if (have > 0) {
            std::ifstream in(partial, std::ios::binary);
            std::vector<char> buffer(1 << 20);
            int64_t hashed = 0;
            while (in && hashed < have) {
                in.read(buffer.data(), std::streamsize(std::min<int64_t>(int64_t(buffer.size()), have - hashed)));
                sha.update(buffer.data(), size_t(in.gcount()));
                hashed += in.gcount();
            }
            if (hashed != have) {
                fs::remove(partial, ec);
                have = 0;
                sha = Sha256();
            } else {
                spdlog::info("resuming {} at {} bytes", request.destination.filename().string(), have);
            }
        }
    }

    int64_t total = request.expectedSize;
    const bool alreadyComplete = request.expectedSize >= 0 && have == request.expectedSize && have > 0;
    std::string lastError;
    for (int attempt = 0; !alreadyComplete && attempt <= request.maxRetries; ++attempt) {
        Attempt a = fetchOnce(request, have, sha, progress, total);
        if (a.cancelled) return makeError(a.message);
        if (a.transportError) {
            lastError = a.message;
            spdlog::warn("download of {} interrupted ({}); retrying from byte {}", request.url, a.message, have);
            continue;
        }
        if (a.status == 416 && request.expectedSize >= 0 && have == request.expectedSize) break;
        if (a.status == 416) {  // our partial file does not fit the remote one: start over
            fs::remove(partial, ec);
            have = 0;
            sha = Sha256();
            lastError = "HTTP 416 for " + request.url;
            continue;
        }
        if (a.status == 401 || a.status == 403)
            return makeError("HTTP " + std::to_string(a.status) + " for " + request.url +
                             ": access denied (gated or private repository? set HF_TOKEN)");
        if (a.status == 404) return makeError("HTTP 404: " + request.url + " not found");
        if (a.status != 200 && a.status != 206)
            return makeError(a.message.empty() ? "HTTP " + std::to_string(a.status) + " for " + request.url : a.message);
        lastError.clear();
        break;
    }
    if (!lastError.empty()) return makeError(lastError);

    if (request.expectedSize >= 0 && have != request.expectedSize)
        return makeError(request.destination.filename().string() + ": downloaded " + std::to_string(have) +
                         " bytes, expected " + std::to_string(request.expectedSize));
    if (!request.expectedSha256.empty()) {
        const std::string digest = sha.hexDigest();
        if (digest != request.expectedSha256) {
            fs::remove(partial, ec);  // corrupt: do not resume from it
            return makeError(request.destination.filename().string() + ": sha256 " + digest + " does not match the hub's " +
                             request.expectedSha256 + " (the file was removed; try again)");
        }
    }
    if (!fs::exists(partial, ec)) std::ofstream(partial, std::ios::binary).flush();  // an empty file
    fs::rename(partial, request.destination, ec);
    if (ec) return makeError("cannot move " + partial.string() + " into place: " + ec.message());
    return {};
}

} // namespace brook
