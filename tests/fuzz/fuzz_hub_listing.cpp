// Fuzz target: what a hub server sends the download clients, without a network. The bytes go to
// both listing parsers (Hugging Face and ModelScope, hub_listing.h) and ModelScope's message
// reader whole, and line by line to the header parsers (Content-Length, Content-Range), the URL
// splitter and the redirect resolver. None may throw, crash or recurse without bound, and an
// accepted listing must keep its promises: every name a safe relative path, every blob name a
// digest, every size in range; a broken promise aborts, so the fuzzer reports it.
#include "hub/blob_downloader.h"
#include "hub/cache_path.h"
#include "hub/content_headers.h"
#include "hub/hub_http.h"
#include "hub/hub_listing.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void require(bool promise)
{
    if (!promise) std::abort();
}

void checkHeaderLine(std::string_view line)
{
    if (auto length = brook::parseContentLength(line)) require(*length >= 0);
    if (auto range = brook::parseContentRange(line))
        require(range->first >= 0 && range->last >= range->first && (range->total == -1 || range->total > range->last));
    const std::string text(line);
    if (auto url = brook::BlobDownloader::splitUrl(text))
        require(url->port >= 1 && url->port <= 65535 && !url->host.empty() && !url->path.empty() &&
                url->path.front() == '/');
    if (auto next = brook::HubHttp::resolveLocation("https://huggingface.co/api/models/o/n?blobs=true", text))
        require(brook::BlobDownloader::splitUrl(*next).ok());
    (void)brook::unsafePathReason(line);
}

}  // namespace

int brookFuzzHubListing(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto info = brook::parseHubListing(text, "fuzz/repo")) {
        require(brook::isLowerHex(info->commit, 40));
        for (const brook::HubFile& file : info->files) {
            require(brook::isSafeRelativePath(file.path) && brook::isModelFilePath(file.path));
            require(file.isLfs() ? brook::isLowerHex(file.sha256, 64) : brook::isLowerHex(file.blobId, 40));
            require(file.size >= -1);
            require(brook::pathInside("/cache/blobs", file.blobName()).ok());
        }
    }
    if (auto files = brook::parseModelScopeListing(text, "fuzz/model")) {
        for (const brook::ModelScopeFile& file : *files) {
            require(brook::isSafeRelativePath(file.path) && brook::isModelFilePath(file.path));
            require(file.sha256.empty() || brook::isLowerHex(file.sha256, 64));
            require(file.size >= -1);
        }
    }
    (void)brook::modelScopeMessage(text);
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find('\n', start), text.size());
        checkHeaderLine(text.substr(start, end - start));
        start = end + 1;
    }
    return 0;
}
