// ModelResolver: turns the MODEL argument of brook-serve / brook-run / the app into a model
// folder: an existing folder is used as is; a Hugging Face id ("baidu/ERNIE-4.5-0.3B-PT") is
// looked up in the Hugging Face cache and downloaded when missing; "modelscope:owner/name"
// ("modelscope:PaddlePaddle/ERNIE-4.5-0.3B-PT") does the same from ModelScope into its cache.
// Qt-free; callable from any thread.
#pragma once

#include "engine/result.h"
#include "hub/hub_client.h"
#include "hub/modelscope_options.h"

#include <filesystem>
#include <string>

namespace brook {

class ModelResolver {
public:
    // ModelScope options come from the environment; HF_HUB_OFFLINE makes both sources offline.
    explicit ModelResolver(HubOptions options = HubOptions::fromEnvironment());
    ModelResolver(HubOptions options, ModelScopeOptions modelScope);

    Result<std::filesystem::path> resolve(const std::string& model,
                                          const DownloadProgressCallback& progress = {}) const;

    // A progress callback that logs (spdlog info) at most every `intervalSeconds`.
    static DownloadProgressCallback loggingProgress(double intervalSeconds = 2.0);

private:
    HubOptions m_options;
    ModelScopeOptions m_modelScope;
};

}  // namespace brook
