// ModelResolver: turns the MODEL argument of brook-serve / brook-run / the app into a model
// folder: an existing folder is used as is; a Hugging Face id ("baidu/ERNIE-4.5-0.3B-PT") is
// looked up in the cache and downloaded when missing. Qt-free; callable from any thread.
#pragma once

#include "engine/result.h"
#include "server/hub_client.h"

#include <filesystem>
#include <string>

namespace brook {

class ModelResolver {
public:
    explicit ModelResolver(HubOptions options = HubOptions::fromEnvironment());

    Result<std::filesystem::path> resolve(const std::string& model, const DownloadProgressCallback& progress = {}) const;

    // A progress callback that logs (spdlog info) at most every `intervalSeconds`.
    static DownloadProgressCallback loggingProgress(double intervalSeconds = 2.0);

private:
    HubOptions m_options;
};

} // namespace brook
