// ServeConfig: everything brook-serve is told, with vLLM's flag names and meanings. It is filled
// from a YAML file (--config, vLLM's keys spelled with '-' or '_'), then from the command line
// (which wins), then checked as a whole before anything loads: a bad value or an unknown key is
// an error naming it.
#pragma once

#include "launch/launch_options.h"
#include "engine/result.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace brook {

inline constexpr const char* kDefaultModel = "baidu/ERNIE-4.5-0.3B-PT";

struct ServeConfig {
    std::string model = kDefaultModel;          // a folder or a Hugging Face id
    LaunchOptions launch;                       // device, dtype, lengths, batch limits, ...
    std::vector<std::string> servedModelNames;  // empty: the MODEL argument
    std::string host = "127.0.0.1";
    int port = 8000;                          // 0: any free port (tests)
    std::string apiKey;                       // empty: no auth (BROOK_API_KEY when unset)
    double requestTimeoutSeconds = 0;         // 0: none
    int maxQueueLen = 0;                      // waiting requests beyond max_num_seqs; 0: no limit
    std::vector<std::string> allowedOrigins;  // CORS; empty: none (browsers from other origins refused)
    std::string generationConfig = "auto";    // auto | vllm | none | a folder with generation_config.json
    double shutdownTimeoutSeconds = 10;       // SIGTERM: how long in-flight requests may finish
    size_t maxRequestBodyBytes = 8u << 20;    // larger bodies get 413
    int httpThreads = 0;                      // 0: enough for max_num_seqs streams
    double httpReadTimeoutSeconds = 30;       // a request's head and body must arrive within this (408)
    int maxConnectionsPerClient = 0;          // slow connections per client address; 0: half the HTTP threads
    double cpuKvCacheSpaceGiB = 0;            // CPU backend KV cache; 0: the default
    std::string logLevel = "info";
    bool disableLogStats = false;

    // The name the API reports (the first served name, else the model argument).
    std::string primaryModelName() const;
};

// Adds brook-serve's own flags (the engine ones come from app/launch_flags.h) and MODEL.
void addServeFlags(CLI::App& app, ServeConfig& config);

// Applies a YAML mapping (vLLM's `--config` file). `source` names the file in messages.
Result<void> applyServeConfigYaml(const std::string& yamlText, const std::string& source, ServeConfig& config);
// Every key a YAML file may hold, spelled with '_'; scheduler_config's as "scheduler_config.KEY".
std::vector<std::string> serveConfigYamlKeys();
Result<void> loadServeConfigYaml(const std::filesystem::path& file, ServeConfig& config);

// The value of --config FILE / --config=FILE in argv, read before the full parse so the command
// line can override the file.
std::string findConfigArgument(int argc, const char* const* argv);

// Spells loosely given values canonically (dtype aliases, a JSON list of origins); call after
// parsing and before validating.
void normalizeServeConfig(ServeConfig& config);

// Cross-checks the merged configuration; the message names the flag at fault.
Result<void> validateServeConfig(const ServeConfig& config);

// Whether `host` is a loopback address (binding elsewhere without --api-key earns a warning).
bool isLoopbackHost(const std::string& host);

}  // namespace brook
