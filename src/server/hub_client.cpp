#include "server/hub_client.h"

#include "server/url_encoding.h"

#include "server/blob_downloader.h"

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <fstream>
#include <regex>
#include <system_error>

namespace brook {

namespace fs = std::filesystem;

namespace {

bool isCommitHash(const std::string& revision) { return std::regex_match(revision, std::regex("[0-9a-f]{40}")); }


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

} // namespace

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

bool HubClient::isRepoId(const std::string& text)
{
    static const std::regex kRepoId("[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9_.-]{1,96}");
    return std::regex_match(text, kRepoId) && text.find("..") == std::string::npos && !endsWith(text, ".git");
}

bool HubClient::isModelFile(const std::string& path)
{
    if (path.find('/') != std::string::npos) return false;  // sub-folders hold other formats (onnx, gguf)
    return endsWith(path, ".json") || endsWith(path, ".safetensors") || path == "tokenizer.model";
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
        std::ifstream ref(repo / "refs" / m_options.revision);
        if (!ref || !std::getline(ref, commit)) return std::nullopt;
    }
    const fs::path snapshot = repo / "snapshots" / commit;
    std::error_code ec;
    if (!fs::exists(snapshot / "config.json", ec)) return std::nullopt;
    return snapshot;
}

std::string HubClient::notReachableMessage(const std::string& repoId, const std::string& why) const
{
    return "cannot download " + repoId + " from " + m_options.endpoint + " (" + why + ") and it is not in the Hugging Face cache at " +
           m_options.cacheDir.string() +
           ". Check the network, set HF_ENDPOINT to a mirror, or pass a local model folder instead.";
}

Result<HubRepoInfo> HubClient::repoInfo(const std::string& repoId) const
{
    auto base = BlobDownloader::splitUrl(m_options.endpoint);
    if (!base) return makeError("HF_ENDPOINT: " + base.error());
    httplib::Client client(base->schemeHostPort);
    client.set_connection_timeout(m_options.connectTimeoutSeconds, 0);
    client.set_read_timeout(m_options.readTimeoutSeconds, 0);
    client.set_follow_location(true);
    httplib::Headers headers{{"User-Agent", "brook/" BROOK_VERSION}};
    if (!m_options.token.empty()) headers.emplace("Authorization", "Bearer " + m_options.token);
    std::string prefix = base->path == "/" ? "" : base->path;
    const std::string path =
        prefix + "/api/models/" + repoId + "/revision/" + percentEncode(m_options.revision) + "?blobs=true";
    auto response = client.Get(path, headers);
    if (!response) return makeError("unreachable: " + httplib::to_string(response.error()));
    if (response->status == 401 || response->status == 403)
        return makeError("HTTP " + std::to_string(response->status) + ": access to " + repoId +
                         " denied; it may be gated or private: accept its terms on the hub and set HF_TOKEN");
    if (response->status == 404)
        return makeError("HTTP 404: no repository " + repoId + " with revision '" + m_options.revision + "' at " +
                         m_options.endpoint);
    if (response->status != 200)
        return makeError("HTTP " + std::to_string(response->status) + " from " + m_options.endpoint + path);

    auto json = nlohmann::json::parse(response->body, nullptr, false);
    if (json.is_discarded() || !json.is_object()) return makeError("the hub's answer for " + repoId + " is not JSON");
    HubRepoInfo info;
    if (!json.contains("sha") || !json["sha"].is_string()) return makeError("the hub's answer for " + repoId + " has no 'sha'");
    info.commit = json["sha"].get<std::string>();
    if (!isCommitHash(info.commit)) return makeError("the hub's answer for " + repoId + " has a malformed 'sha'");
    const auto siblings = json.value("siblings", nlohmann::json::array());
    for (const auto& s : siblings) {
        if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string()) continue;
        HubFile file;
        file.path = s["rfilename"].get<std::string>();
        if (!isModelFile(file.path)) continue;
        if (s.contains("size") && s["size"].is_number_integer()) file.size = s["size"].get<int64_t>();
        if (s.contains("blobId") && s["blobId"].is_string()) file.blobId = s["blobId"].get<std::string>();
        if (s.contains("lfs") && s["lfs"].is_object()) {
            const auto& lfs = s["lfs"];
            if (lfs.contains("sha256") && lfs["sha256"].is_string()) file.sha256 = lfs["sha256"].get<std::string>();
            if (lfs.contains("size") && lfs["size"].is_number_integer()) file.size = lfs["size"].get<int64_t>();
        }
        if (file.blobName().empty() || file.blobName().find('/') != std::string::npos) file.blobId = "";
        if (file.blobName().empty()) return makeError("the hub's answer for " + repoId + " gives no blob id for " + file.path);
        info.files.push_back(std::move(file));
    }
    const bool hasConfig = std::any_of(info.files.begin(), info.files.end(), [](const HubFile& f) { return f.path == "config.json"; });
    if (!hasConfig) return makeError(repoId + " has no config.json: it is not a transformers model repository");
    return info;
}

Result<void> HubClient::fetchFile(const std::string& repoId, const std::string& commit, const HubFile& file,
                                  const std::function<bool(int64_t, int64_t)>& progress) const
{
    const fs::path repo = repoCacheDir(repoId);
    BlobRequest request;
    request.url = m_options.endpoint + "/" + repoId + "/resolve/" + commit + "/" + encodePath(file.path);
    request.token = m_options.token;
    request.destination = repo / "blobs" / file.blobName();
    request.expectedSize = file.size;
    request.expectedSha256 = file.sha256;
    request.connectTimeoutSeconds = m_options.connectTimeoutSeconds;
    request.readTimeoutSeconds = m_options.readTimeoutSeconds;
    request.maxRetries = m_options.maxRetries;
    return BlobDownloader::download(request, progress);
}

Result<fs::path> HubClient::download(const std::string& repoId, const DownloadProgressCallback& progress) const
{
    if (!isRepoId(repoId)) return makeError("'" + repoId + "' is not a Hugging Face repository id (org/name)");
    if (m_options.offline) {
        if (auto cached = cachedSnapshot(repoId)) return *cached;
        return makeError("HF_HUB_OFFLINE is set and " + repoId + " (revision " + m_options.revision +
                         ") is not in the Hugging Face cache at " + m_options.cacheDir.string());
    }
    auto info = repoInfo(repoId);
    if (!info) {
        if (info.error().rfind("unreachable: ", 0) == 0) {
            if (auto cached = cachedSnapshot(repoId)) {
                spdlog::warn("{} is unreachable ({}); using the cached snapshot {}", m_options.endpoint, info.error(),
                             cached->string());
                return *cached;
            }
            return makeError(notReachableMessage(repoId, info.error().substr(13)));
        }
        return makeError(info.error());
    }

    const fs::path repo = repoCacheDir(repoId);
    const fs::path snapshot = repo / "snapshots" / info->commit;
    std::error_code ec;
    std::vector<const HubFile*> missing;
    int64_t bytesTotal = 0;
    for (const HubFile& file : info->files) {
        const fs::path target = snapshot / file.path;
        if (fs::exists(target, ec) && (file.size < 0 || int64_t(fs::file_size(target, ec)) == file.size)) continue;
        const fs::path blob = repo / "blobs" / file.blobName();
        if (fs::exists(blob, ec) && (file.size < 0 || int64_t(fs::file_size(blob, ec)) == file.size)) {
            if (auto linked = linkIntoSnapshot(blob, target, file.path); !linked) return makeError(linked.error());
            continue;
        }
        missing.push_back(&file);
        bytesTotal += std::max<int64_t>(file.size, 0);
    }

    int64_t bytesBefore = 0;
    for (size_t i = 0; i < missing.size(); ++i) {
        const HubFile& file = *missing[i];
        spdlog::info("downloading {}/{} ({} of {}, {:.1f} MiB)", repoId, file.path, i + 1, missing.size(),
                     double(std::max<int64_t>(file.size, 0)) / (1 << 20));
        auto fetched = fetchFile(repoId, info->commit, file,
                                 fileProgressReporter(progress, file.path, int(i), int(missing.size()), bytesBefore,
                                                      bytesTotal));
        if (!fetched) return makeError(repoId + "/" + file.path + ": " + fetched.error());
        if (auto linked = linkIntoSnapshot(repo / "blobs" / file.blobName(), snapshot / file.path, file.path); !linked)
            return makeError(linked.error());
        bytesBefore += std::max<int64_t>(file.size, 0);
    }

    if (!isCommitHash(m_options.revision)) {
        fs::create_directories((repo / "refs" / m_options.revision).parent_path(), ec);
        std::ofstream ref(repo / "refs" / m_options.revision, std::ios::trunc);
        ref << info->commit;
        if (!ref) return makeError("cannot write " + (repo / "refs" / m_options.revision).string());
    }
    return snapshot;
}

} // namespace brook
