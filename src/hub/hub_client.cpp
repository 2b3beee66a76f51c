#include "hub/hub_client.h"

#include "hub/blob_downloader.h"
#include "hub/cache_path.h"
#include "hub/hub_http.h"
#include "hub/sha1.h"
#include "hub/url_encoding.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <system_error>

namespace brook {

namespace fs = std::filesystem;

namespace {

bool isCommitHash(const std::string& revision) { return isLowerHex(revision, 40); }

// Encodes each segment of a repository path but keeps its slashes.
std::string encodePath(const std::string& path)
{
    std::string out;
    size_t start = 0;
    while (true) {
        const size_t slash = path.find('/', start);
        out += percentEncode(path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
        if (slash == std::string::npos) break;
        out += '/';
        start = slash + 1;
    }
    return out;
}

bool endsWith(const std::string& s, const std::string& suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether `path` holds the listed file: its size and, for git files, its blob id (cheap: they
// are small). LFS blobs were checked by sha256 when written and are trusted by size.
bool holdsFile(const fs::path& path, const HubFile& file)
{
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return false;
    if (file.size >= 0 && int64_t(fs::file_size(path, ec)) != file.size) return false;
    if (file.isLfs()) return true;
    const auto id = Sha1::gitBlobIdOfFile(path);
    if (!id || *id != file.blobId) {
        spdlog::warn("{} in the cache does not match the hub's blob id {}; fetching it again", path.string(),
                     file.blobId);
        return false;
    }
    return true;
}

int64_t saturatingAdd(int64_t a, int64_t b)
{
    return b > std::numeric_limits<int64_t>::max() - a ? std::numeric_limits<int64_t>::max() : a + b;
}

// Places snapshots/<commit>/<path> as a relative symlink to the blob (a copy where the file
// system has no symlinks), as huggingface_hub does.
Result<void> linkIntoSnapshot(const fs::path& blob, const fs::path& target, const std::string& repoPath)
{
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    fs::remove(target, ec);
    std::string up = "../../";
    for (char c : repoPath)
        if (c == '/') up += "../";
    fs::create_symlink(fs::path(up) / "blobs" / blob.filename(), target, ec);
    if (ec) {
        fs::copy_file(blob, target, fs::copy_options::overwrite_existing, ec);
        if (ec) return makeError("cannot place " + target.string() + ": " + ec.message());
    }
    return {};
}

}  // namespace

std::function<bool(int64_t, int64_t)> fileProgressReporter(const DownloadProgressCallback& progress,
                                                           const std::string& file, int fileIndex, int fileCount,
                                                           int64_t bytesBefore, int64_t bytesTotal)
{
    return [=](int64_t done, int64_t total) {
        if (!progress) return true;
        DownloadProgress p;
        p.file = file;
        p.fileIndex = fileIndex;
        p.fileCount = fileCount;
        p.fileBytesDone = done;
        p.fileBytesTotal = total;
        p.bytesDone = bytesBefore + done;
        p.bytesTotal = bytesTotal;
        return progress(p);
    };
}

HubClient::HubClient(HubOptions options) : m_options(std::move(options)) {}

std::string HubClient::repoIdProblem(const std::string& text)
{
    const size_t slash = text.find('/');
    if (slash == std::string::npos || text.find('/', slash + 1) != std::string::npos)
        return "it must be owner/name, with exactly one '/'";
    for (const std::string& part : {text.substr(0, slash), text.substr(slash + 1)}) {
        if (part.empty()) return "the owner and the name must not be empty";
        if (part == "." || part == "..") return "'" + part + "' is not a name";
        if (part.size() > 96) return "a part is longer than 96 characters";
        for (unsigned char c : part)
            if (!std::isalnum(c) && c != '-' && c != '_' && c != '.')
                return "only letters, digits, '-', '_' and '.' are allowed";
        if (!std::isalnum(static_cast<unsigned char>(part.front()))) return "a part must start with a letter or digit";
        const unsigned char last = static_cast<unsigned char>(part.back());
        if (!std::isalnum(last) && last != '_') return "a part must end with a letter, digit or '_'";
        if (part.find("--") != std::string::npos || part.find("..") != std::string::npos)
            return "'--' and '..' are not allowed";
    }
    if (endsWith(text, ".git")) return "the name must not end with .git";
    return {};
}

fs::path HubClient::repoCacheDir(const std::string& repoId) const
{
    std::string name = "models--" + repoId;
    for (size_t pos = name.find('/'); pos != std::string::npos; pos = name.find('/', pos)) name.replace(pos, 1, "--");
    return m_options.cacheDir / name;
}

std::optional<fs::path> HubClient::cachedSnapshot(const std::string& repoId) const
{
    const fs::path repo = repoCacheDir(repoId);
    std::string commit = m_options.revision;
    if (!isCommitHash(commit)) {
        const auto refPath = pathInside(repo / "refs", m_options.revision);
        if (!refPath) return std::nullopt;
        std::ifstream ref(*refPath);
        if (!ref || !std::getline(ref, commit) || !isLowerHex(commit, 40)) return std::nullopt;
    }
    const fs::path snapshot = repo / "snapshots" / commit;
    std::error_code ec;
    if (!fs::exists(snapshot / "config.json", ec)) return std::nullopt;
    return snapshot;
}

std::string HubClient::notReachableMessage(const std::string& repoId, const std::string& why) const
{
    return "cannot download " + repoId + " from " + m_options.endpoint + " (" + why +
           ") and it is not in the Hugging Face cache at " + m_options.cacheDir.string() +
           ". Check the network, set HF_ENDPOINT to a mirror, or pass a local model folder instead.";
}

Result<HubRepoInfo> HubClient::repoInfo(const std::string& repoId) const
{
    if (const std::string why = repoIdProblem(repoId); !why.empty())
        return makeError("'" + repoId + "' is not a valid Hugging Face repository id: " + why);
    auto base = BlobDownloader::splitUrl(m_options.endpoint);
    if (!base) return makeError("HF_ENDPOINT: " + base.error());
    const std::string url =
        m_options.endpoint + "/api/models/" + repoId + "/revision/" + percentEncode(m_options.revision) + "?blobs=true";
    HttpGetOptions get;
    get.token = m_options.token;
    get.connectTimeoutSeconds = m_options.connectTimeoutSeconds;
    get.readTimeoutSeconds = m_options.readTimeoutSeconds;
    get.cancel = m_options.cancel;
    auto response = HubHttp::getText(url, get);
    if (!response) return response.failure();
    if (response->status == 401 || response->status == 403)
        return makeError("HTTP " + std::to_string(response->status) + ": access to " + repoId +
                         " denied; it may be gated or private: accept its terms on the hub and set HF_TOKEN");
    if (response->status == 404)
        return makeError("HTTP 404: no repository " + repoId + " with revision '" + m_options.revision + "' at " +
                         m_options.endpoint);
    if (response->status != 200)
        return makeError("HTTP " + std::to_string(response->status) + " from " + response->url);
    return parseHubListing(response->body, repoId);
}

Result<void> HubClient::fetchFile(const std::string& repoId, const std::string& commit, const HubFile& file,
                                  const std::function<bool(int64_t, int64_t)>& progress) const
{
    auto blob = pathInside(repoCacheDir(repoId) / "blobs", file.blobName());
    if (!blob) return blob.failure();
    BlobRequest request;
    request.url = m_options.endpoint + "/" + repoId + "/resolve/" + commit + "/" + encodePath(file.path);
    request.token = m_options.token;
    request.destination = *blob;
    request.expectedSize = file.size;
    request.expectedSha256 = file.sha256;
    if (!file.isLfs()) request.expectedGitBlobId = file.blobId;
    request.connectTimeoutSeconds = m_options.connectTimeoutSeconds;
    request.readTimeoutSeconds = m_options.readTimeoutSeconds;
    request.maxRetries = m_options.maxRetries;
    request.cancel = m_options.cancel;
    return BlobDownloader::download(request, progress);
}

Result<fs::path> HubClient::download(const std::string& repoId, const DownloadProgressCallback& progress) const
{
    if (const std::string why = repoIdProblem(repoId); !why.empty())
        return makeError("'" + repoId + "' is not a valid Hugging Face repository id: " + why);
    if (m_options.offline) {
        if (auto cached = cachedSnapshot(repoId)) return *cached;
        return makeError("HF_HUB_OFFLINE is set and " + repoId + " (revision " + m_options.revision +
                         ") is not in the Hugging Face cache at " + m_options.cacheDir.string());
    }
    auto info = repoInfo(repoId);
    if (!info) {
        if (info.failure().code == ErrorCode::Unreachable) {
            if (auto cached = cachedSnapshot(repoId)) {
                spdlog::warn("{} is unreachable ({}); using the cached snapshot {}", m_options.endpoint, info.error(),
                             cached->string());
                return *cached;
            }
            return makeError(ErrorCode::Unreachable, "", notReachableMessage(repoId, info.error()));
        }
        return info.failure();
    }

    const fs::path repo = repoCacheDir(repoId);
    const fs::path snapshot = repo / "snapshots" / info->commit;
    std::error_code ec;
    std::vector<const HubFile*> missing;
    int64_t bytesTotal = 0;
    for (const HubFile& file : info->files) {
        const auto target = pathInside(snapshot, file.path);
        const auto blob = pathInside(repo / "blobs", file.blobName());
        if (!target) return target.failure();
        if (!blob) return blob.failure();
        if (holdsFile(*target, file)) continue;
        if (holdsFile(*blob, file)) {
            if (auto linked = linkIntoSnapshot(*blob, *target, file.path); !linked) return linked.failure();
            continue;
        }
        missing.push_back(&file);
        bytesTotal = saturatingAdd(bytesTotal, std::max<int64_t>(file.size, 0));
    }

    int64_t bytesBefore = 0;
    for (size_t i = 0; i < missing.size(); ++i) {
        const HubFile& file = *missing[i];
        spdlog::info("downloading {}/{} ({} of {}, {:.1f} MiB)", repoId, file.path, i + 1, missing.size(),
                     double(std::max<int64_t>(file.size, 0)) / (1 << 20));
        auto fetched =
            fetchFile(repoId, info->commit, file,
                      fileProgressReporter(progress, file.path, int(i), int(missing.size()), bytesBefore, bytesTotal));
        if (!fetched) return makeError(repoId + "/" + file.path + ": " + fetched.error());
        // Both paths were checked by the loop above.
        if (auto linked = linkIntoSnapshot(*pathInside(repo / "blobs", file.blobName()),
                                           *pathInside(snapshot, file.path), file.path);
            !linked)
            return linked.failure();
        bytesBefore = saturatingAdd(bytesBefore, std::max<int64_t>(file.size, 0));
    }

    if (!isCommitHash(m_options.revision)) {
        // A branch or tag, "refs/pr/1" included, names a file under refs/, never one outside.
        const auto refPath = pathInside(repo / "refs", m_options.revision);
        if (!refPath) return makeError("revision " + refPath.error());
        fs::create_directories(refPath->parent_path(), ec);
        std::ofstream ref(*refPath, std::ios::trunc);
        ref << info->commit;
        if (!ref) return makeError("cannot write " + refPath->string());
    }
    return snapshot;
}

}  // namespace brook
