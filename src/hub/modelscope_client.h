// ModelScopeClient: downloads a model repository from ModelScope (modelscope.cn), Brook's second
// model source next to the Hugging Face Hub, into the cache layout the modelscope Python SDK uses,
// so a model fetched by either is found by both:
//   <cache>/models/<owner>/<name>/<file>                     dots in <name> become "___"
//   <cache>/models/._____temp/<owner>/<name>/<file>.incomplete  partial downloads, resumed by Range
// (older SDKs used <cache>/<owner>/<name>; that folder is still read when offline). ModelScope
// has no content-addressed blobs, so a file in the folder counts as current when its size and
// sha256 match the listing; .brook_sha256.json remembers checked digests so runs do not re-hash.
// Only the files a model folder needs are fetched (HubClient::isModelFile); public models only
// (ModelScope authenticates with a login cookie, which Brook does not handle). The listing is
// checked before any name in it touches the disk (hub_listing.h), and every path is joined onto
// the cache through pathInside (cache_path.h).
//
// The HTTP API has no published reference; it is taken from how the SDK builds its URLs:
//   GET {endpoint}/api/v1/models/{owner}/{name}/repo/files?Revision={rev}&Recursive=True
//       -> {"Code": 200, "Data": {"Files": [{"Name", "Path", "Type": "blob"|"tree", "Size",
//           "Sha256", "Revision", ...}]}, "Message", "Success"}
//   GET {endpoint}/api/v1/models/{owner}/{name}/repo?Revision={rev}&FilePath={path}  the bytes
// Sources relied on (github.com/modelscope/modelscope): modelscope/hub/api.py
// (HubApi.get_model_files), modelscope/hub/file_download.py (get_file_download_url,
// create_temporary_directory_and_cache), modelscope/hub/utils/caching.py (ModelFileSystemCache),
// modelscope/hub/errors.py (the Code/Message envelope), modelscope/hub/constants.py
// (www.modelscope.cn, MODELSCOPE_DOMAIN), modelscope/utils/file_utils.py (MODELSCOPE_CACHE,
// get_model_cache_root).
// Separate instances may run in parallel; one instance is not thread-safe.
#pragma once

#include "engine/result.h"
#include "hub/hub_client.h"
#include "hub/hub_listing.h"
#include "hub/modelscope_options.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace brook {

class ModelScopeClient {
public:
    static constexpr const char* kPrefix = "modelscope:";                           // ModelResolver's form
    static constexpr const char* kDefaultModel = "PaddlePaddle/ERNIE-4.5-0.3B-PT";  // ERNIE on ModelScope

    explicit ModelScopeClient(ModelScopeOptions options);

    // "owner/name", the same characters the Hugging Face Hub allows.
    static bool isModelId(const std::string& text) { return HubClient::isRepoId(text); }
    // "modelscope:owner/name" -> "owner/name"; nullopt without the prefix.
    static std::optional<std::string> stripPrefix(const std::string& model);

    // Lists the revision's model files (Type "blob" only, filtered by HubClient::isModelFile).
    // Transport failures come back with ErrorCode::Unreachable.
    Result<std::vector<ModelScopeFile>> listFiles(const std::string& modelId) const;
    // Fetches what is missing or stale and returns the model folder. Offline, or when ModelScope
    // cannot be reached, a cached folder with a config.json is used instead.
    Result<std::filesystem::path> download(const std::string& modelId,
                                           const DownloadProgressCallback& progress = {}) const;
    // A cached folder with a config.json (current layout first, then the old one).
    std::optional<std::filesystem::path> cachedModel(const std::string& modelId) const;
    // <cache>/models/<owner>/<name with '.' -> "___">
    std::filesystem::path modelDir(const std::string& modelId) const;

    const ModelScopeOptions& options() const { return m_options; }

private:
    std::string fileUrl(const std::string& modelId, const std::string& path) const;
    std::string notReachableMessage(const std::string& modelId, const std::string& why) const;

    ModelScopeOptions m_options;
};

}  // namespace brook
