// HubOptions: where and how Brook talks to the Hugging Face Hub, read from the same environment
// variables huggingface_hub reads, so a cache filled by `huggingface-cli download` or vLLM is
// reused as is: HF_ENDPOINT (mirrors), HF_HOME / HF_HUB_CACHE (cache folder), HF_TOKEN (or the
// token file `huggingface-cli login` writes), HF_HUB_OFFLINE.
#pragma once

#include "hub/cancel_signal.h"

#include <filesystem>
#include <memory>
#include <string>

namespace brook {

struct HubOptions {
    std::string endpoint = "https://huggingface.co";
    std::filesystem::path cacheDir;  // the "hub" folder holding models--org--name/
    std::string token;               // sent as "Authorization: Bearer" to the endpoint only
    std::string revision = "main";   // branch, tag or commit
    bool offline = false;            // use the cache only
    int connectTimeoutSeconds = 10;
    int readTimeoutSeconds = 60;
    int maxRetries = 3;  // per file, resuming where the last try stopped
    std::shared_ptr<CancelSignal> cancel;  // may be null; cancel() stops the download, even mid-read

    // Reads the environment (thread-safe as long as nobody calls setenv meanwhile).
    static HubOptions fromEnvironment();
};

}  // namespace brook
