#include "hub/modelscope_client.h"

#include "hub/blob_downloader.h"
#include "hub/cache_path.h"
#include "hub/hub_http.h"
#include "hub/sha256.h"
#include "hub/url_encoding.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <system_error>

namespace brook {

namespace fs = std::filesystem;

namespace {

constexpr const char* kIndexName = ".brook_sha256.json";
constexpr const char* kTempFolder = "._____temp";  // the SDK's TEMPORARY_FOLDER_NAME

std::string splitOwner(const std::string& modelId) { return modelId.substr(0, modelId.find('/')); }
std::string splitName(const std::string& modelId) { return modelId.substr(modelId.find('/') + 1); }

// The sha256 each file of a model folder was last checked against: path -> digest.
using ShaIndex = std::map<std::string, std::string>;

ShaIndex loadIndex(const fs::path& dir)
{
    ShaIndex index;
    std::ifstream in(dir / kIndexName);
    if (!in) return index;
    auto json = nlohmann::json::parse(in, nullptr, false);
    if (!json.is_object()) return index;  // a damaged index only costs a re-hash
    for (const auto& [path, digest] : json.items())
        if (digest.is_string()) index[path] = digest.get<std::string>();
    return index;
}

Result<void> saveIndex(const fs::path& dir, const ShaIndex& index)
{
    const fs::path target = dir / kIndexName;
    const fs::path temp = target.string() + ".tmp";
    {
        std::ofstream out(temp, std::ios::trunc);
        out << nlohmann::json(index).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (!out) return makeError("cannot write " + temp.string());
    }
    std::error_code ec;
    fs::rename(temp, target, ec);
    if (ec) return makeError("cannot write " + target.string() + ": " + ec.message());
    return {};
}

// Whether dir/<file> is the listed file: same size and, when the listing has one, same sha256
// (hashed once, then remembered in the index).
bool isCurrent(const fs::path& dir, const ModelScopeFile& file, ShaIndex& index, bool& indexChanged)
{
    std::error_code ec;
    const auto path = pathInside(dir, file.path);
    if (!path) return false;
    const fs::path& target = *path;
    if (!fs::is_regular_file(target, ec)) return false;
    if (file.size >= 0 && int64_t(fs::file_size(target, ec)) != file.size) return false;
    if (file.sha256.empty()) return true;
    if (auto it = index.find(file.path); it != index.end() && it->second == file.sha256) return true;
    const auto digest = Sha256::hashFile(target);
    if (!digest || *digest != file.sha256) return false;
    index[file.path] = file.sha256;
    indexChanged = true;
    return true;
}

}  // namespace

ModelScopeClient::ModelScopeClient(ModelScopeOptions options) : m_options(std::move(options)) {}

std::optional<std::string> ModelScopeClient::stripPrefix(const std::string& model)
{
    const std::string prefix = kPrefix;
    if (model.size() < prefix.size() || model.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
    return model.substr(prefix.size());
}

fs::path ModelScopeClient::modelDir(const std::string& modelId) const
{
    std::string name = splitName(modelId);
    for (size_t pos = name.find('.'); pos != std::string::npos; pos = name.find('.', pos + 3))
        name.replace(pos, 1, "___");
    return m_options.cacheDir / "models" / splitOwner(modelId) / name;
}

std::optional<fs::path> ModelScopeClient::cachedModel(const std::string& modelId) const
{
    std::error_code ec;
    for (const fs::path& dir : {modelDir(modelId), m_options.cacheDir / splitOwner(modelId) / splitName(modelId)})
        if (fs::exists(dir / "config.json", ec)) return dir;
    return std::nullopt;
}

std::string ModelScopeClient::fileUrl(const std::string& modelId, const std::string& path) const
{
    return m_options.endpoint + "/api/v1/models/" + modelId + "/repo?Revision=" + percentEncode(m_options.revision) +
           "&FilePath=" + percentEncode(path);
}

std::string ModelScopeClient::notReachableMessage(const std::string& modelId, const std::string& why) const
{
    return "cannot download " + modelId + " from ModelScope at " + m_options.endpoint + " (" + why +
           ") and it is not in the ModelScope cache at " + m_options.cacheDir.string() +
           ". Check the network, set MODELSCOPE_DOMAIN to a ModelScope site you can reach, or pass a local model "
           "folder instead.";
}

Result<std::vector<ModelScopeFile>> ModelScopeClient::listFiles(const std::string& modelId) const
{
    if (const std::string why = HubClient::repoIdProblem(modelId); !why.empty())
        return makeError("'" + modelId + "' is not a valid ModelScope model id (owner/name): " + why);
    auto base = BlobDownloader::splitUrl(m_options.endpoint);
    if (!base) return makeError("MODELSCOPE_DOMAIN: " + base.error());
    const std::string url = m_options.endpoint + "/api/v1/models/" + modelId +
                            "/repo/files?Revision=" + percentEncode(m_options.revision) + "&Recursive=True";
    HttpGetOptions get;
    get.connectTimeoutSeconds = m_options.connectTimeoutSeconds;
    get.readTimeoutSeconds = m_options.readTimeoutSeconds;
    get.cancel = m_options.cancel;
    auto response = HubHttp::getText(url, get);
    if (!response) return response.failure();

    // Errors come as {"Code": <not 200>, "Message": ...}, with or without an HTTP error status.
    const std::string message = modelScopeMessage(response->body);
    const std::string said = message.empty() ? "" : " (ModelScope says: " + message + ")";
    if (response->status == 401 || response->status == 403)
        return makeError("HTTP " + std::to_string(response->status) + ": access to " + modelId +
                         " on ModelScope denied; it may be private, and Brook downloads public models only" + said);
    if (response->status == 404)
        return makeError("HTTP 404: no model " + modelId + " with revision '" + m_options.revision +
                         "' on ModelScope at " + m_options.endpoint + said);
    if (response->status != 200)
        return makeError("HTTP " + std::to_string(response->status) + " from " + response->url + said);
    return parseModelScopeListing(response->body, modelId);
}

Result<fs::path> ModelScopeClient::download(const std::string& modelId, const DownloadProgressCallback& progress) const
{
    if (const std::string why = HubClient::repoIdProblem(modelId); !why.empty())
        return makeError("'" + modelId + "' is not a valid ModelScope model id (owner/name): " + why);
    if (m_options.offline) {
        if (auto cached = cachedModel(modelId)) return *cached;
        return makeError("offline (MODELSCOPE_OFFLINE or HF_HUB_OFFLINE is set) and " + modelId +
                         " is not in the ModelScope cache at " + m_options.cacheDir.string());
    }
    auto files = listFiles(modelId);
    if (!files) {
        if (files.failure().code != ErrorCode::Unreachable) return files.failure();
        if (auto cached = cachedModel(modelId)) {
            spdlog::warn("ModelScope at {} is unreachable ({}); using the cached {}", m_options.endpoint, files.error(),
                         cached->string());
            return *cached;
        }
        return makeError(ErrorCode::Unreachable, "", notReachableMessage(modelId, files.error()));
    }

    const fs::path dir = modelDir(modelId);
    const fs::path temp = m_options.cacheDir / "models" / kTempFolder / splitOwner(modelId) / splitName(modelId);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return makeError("cannot create " + dir.string() + ": " + ec.message());
    ShaIndex index = loadIndex(dir);
    bool indexChanged = false;
    std::vector<const ModelScopeFile*> missing;
    int64_t bytesTotal = 0;
    for (const ModelScopeFile& file : *files) {
        if (isCurrent(dir, file, index, indexChanged)) continue;
        missing.push_back(&file);
        bytesTotal = std::min(bytesTotal + std::max<int64_t>(file.size, 0), int64_t(1) << 62);  // sizes are < 2^50 each
    }
    if (indexChanged)
        if (auto saved = saveIndex(dir, index); !saved) return saved.failure();

    int64_t bytesBefore = 0;
    for (size_t i = 0; i < missing.size(); ++i) {
        const ModelScopeFile& file = *missing[i];
        spdlog::info("downloading {}/{} from ModelScope ({} of {}, {:.1f} MiB)", modelId, file.path, i + 1,
                     missing.size(), double(std::max<int64_t>(file.size, 0)) / (1 << 20));
        const auto partial = pathInside(temp, file.path);
        const auto target = pathInside(dir, file.path);
        if (!partial) return partial.failure();
        if (!target) return target.failure();
        BlobRequest request;
        request.url = fileUrl(modelId, file.path);
        request.destination = *partial;
        request.expectedSize = file.size;
        request.expectedSha256 = file.sha256;
        request.connectTimeoutSeconds = m_options.connectTimeoutSeconds;
        request.readTimeoutSeconds = m_options.readTimeoutSeconds;
        request.cancel = m_options.cancel;
        request.maxRetries = m_options.maxRetries;
        auto fetched = BlobDownloader::download(
            request, fileProgressReporter(progress, file.path, int(i), int(missing.size()), bytesBefore, bytesTotal));
        if (!fetched) return makeError(modelId + "/" + file.path + " (ModelScope): " + fetched.error());
        fs::rename(request.destination, *target, ec);
        if (ec)
            return makeError("cannot move " + request.destination.string() + " to " + target->string() + ": " +
                             ec.message());
        if (file.sha256.empty()) index.erase(file.path);
        else index[file.path] = file.sha256;
        if (auto saved = saveIndex(dir, index); !saved) return saved.failure();
        bytesBefore = std::min(bytesBefore + std::max<int64_t>(file.size, 0), int64_t(1) << 62);
    }
    return dir;
}

}  // namespace brook
