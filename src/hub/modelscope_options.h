// ModelScopeOptions: where and how Brook talks to ModelScope (modelscope.cn), read from the
// environment variables the modelscope Python SDK reads, so a cache it filled is reused:
// MODELSCOPE_DOMAIN (the site: "www.modelscope.cn" by default; Brook also takes a full URL, which
// is how tests point it at a local server), MODELSCOPE_CACHE (cache root, default
// ~/.cache/modelscope/hub; models live under <root>/models/<owner>/<name>), MODELSCOPE_OFFLINE.
#pragma once

#include "hub/cancel_signal.h"

#include <filesystem>
#include <memory>
#include <string>

namespace brook {

struct ModelScopeOptions {
    static constexpr const char* kDefaultEndpoint = "https://www.modelscope.cn";

    std::string endpoint = kDefaultEndpoint;  // scheme://host[:port], no trailing slash
    std::filesystem::path cacheDir;           // the SDK's MODELSCOPE_CACHE root ("hub" folder)
    std::string revision = "master";          // branch or tag
    bool offline = false;                     // use the cache only
    int connectTimeoutSeconds = 10;
    int readTimeoutSeconds = 60;
    int maxRetries = 3;  // per file, resuming where the last try stopped
    std::shared_ptr<CancelSignal> cancel;  // may be null; cancel() stops the download, even mid-read

    // Reads the environment (thread-safe as long as nobody calls setenv meanwhile).
    static ModelScopeOptions fromEnvironment();
    // "www.modelscope.cn" -> "https://www.modelscope.cn"; URLs lose trailing slashes.
    static std::string endpointFromDomain(std::string domain);
};

}  // namespace brook
