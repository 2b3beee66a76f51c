// brook-serve: the OpenAI-compatible server, as `vllm serve` is used:
//   brook-serve [MODEL] [--host H] [--port P] [--api-key K] [--config FILE.yaml] [engine flags]
// MODEL is a folder or a Hugging Face id (downloaded into the HF cache). The HTTP server listens
// first (GET /health answers 503 while the model loads). SIGINT/SIGTERM (Ctrl+C or closing the
// console on Windows, platform/stop_signals.h): new requests get 503,
// running ones have --shutdown-timeout seconds to finish, the rest are aborted; exit code 0.
// A second signal exits at once.
#include "platform/console_utf8.h"
#include "platform/executable_path.h"
#include "platform/heap_trimmer.h"
#include "platform/server_malloc.h"
#include "platform/stop_signals.h"
#include "app/cli_logging.h"
#include "app/launch_flags.h"
#include "launch/engine_launcher.h"
#include "hub/model_resolver.h"
#include "server/openai_server.h"
#include "server/serve_config.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

using namespace brook;

namespace {

struct StopSignal {
    std::mutex mutex;
    std::condition_variable cv;
    std::atomic<bool> requested{false};

    void wait()
    {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return requested.load(); });
    }

    void request(const std::string& signalName)
    {
        if (requested.exchange(true)) {
            spdlog::warn("second signal: exiting now");
            std::_Exit(1);
        }
        spdlog::info("received {}: shutting down", signalName);
        std::lock_guard lock(mutex);
        cv.notify_all();
    }
};

Result<GenerationDefaults> generationDefaultsFor(const ServeConfig& config, const LaunchedEngine& launched)
{
    if (config.generationConfig == "auto") return launched.generationDefaults;
    if (config.generationConfig == "vllm" || config.generationConfig == "none") return GenerationDefaults{};
    return loadGenerationDefaults(std::filesystem::path(config.generationConfig) / "generation_config.json");
}

}  // namespace

int main(int argc, char** argv)
{
    // Before any thread starts: malloc set up for hundreds of HTTP workers (server_malloc.h).
    brook::useServerMalloc(argv);
    brook::rememberArgv0(argc > 0 ? argv[0] : nullptr);
    brook::useUtf8Console();
    ServeConfig config;
    if (const std::string file = findConfigArgument(argc, argv); !file.empty()) {
        if (auto loaded = loadServeConfigYaml(file, config); !loaded) {
            std::cerr << "brook-serve: " << loaded.error() << "\n";
            return 2;
        }
    }
    CLI::App app{"brook-serve: an OpenAI-compatible server for ERNIE-4.5 (vLLM's flags)"};
    addServeFlags(app, config);
    addLaunchFlags(app, config.launch);
    app.set_version_flag("--version", "brook-serve " BROOK_VERSION);
    CLI11_PARSE(app, argc, argv);
    if (config.apiKey.empty())
        if (const char* key = std::getenv("BROOK_API_KEY")) config.apiKey = key;
    normalizeServeConfig(config);
    if (auto valid = validateServeConfig(config); !valid) {
        std::cerr << "brook-serve: " << valid.error() << "\n";
        return 2;
    }
    setUpCliLogging(config.logLevel);

    StopSignal stop;
    if (const std::string failed = installStopSignals([&](const std::string& name) { stop.request(name); });
        !failed.empty()) {
        std::cerr << "brook-serve: " << failed << "\n";
        return 1;
    }

    OpenAiServer server(config);
    auto port = server.start();
    if (!port) {
        spdlog::error("{}", port.error());
        return 1;
    }

    auto fail = [&](const std::string& message) {
        spdlog::error("{}", message);
        server.setLoadError(message);
        server.stop();
        return 1;
    };
    spdlog::info("loading {}", config.model);
    auto logProgress = ModelResolver::loggingProgress();
    auto modelDir = ModelResolver().resolve(
        config.model, [&](const DownloadProgress& p) { return !stop.requested.load() && logProgress(p); });
    if (!modelDir) return stop.requested ? (server.stop(), 0) : fail(modelDir.error());

    LaunchOptions launch = config.launch;
    launch.modelDir = *modelDir;
    launch.servedModelName = config.primaryModelName();
    launch.logStats = !config.disableLogStats;
    if (config.cpuKvCacheSpaceGiB > 0) launch.cpuKvCacheBytes = int64_t(config.cpuKvCacheSpaceGiB * double(1LL << 30));
    auto launched = launchEngine(launch);
    if (!launched) return fail(launchErrorForCli(launched.failure()));
    auto defaults = generationDefaultsFor(config, *launched);
    if (!defaults) return fail(defaults.error());

    server.attach(*launched->engine, *defaults, *modelDir);
    // A server left running for days: freed heap pages go back to the system (heap_trimmer.h).
    const HeapTrimmer heapTrimmer;
    spdlog::info("ready: http://{}:{}/v1 serves '{}'", config.host, *port, config.primaryModelName());
    stop.wait();

    server.drain(std::chrono::duration<double>(config.shutdownTimeoutSeconds));
    server.stop();
    launched->engine->shutdown();
    spdlog::info("stopped");
    return 0;
}
