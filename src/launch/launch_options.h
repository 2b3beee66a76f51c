// LaunchOptions: how to bring up an engine on a model folder: the serving knobs
// (serving_settings.h, vLLM's flag meanings) plus what a launch needs besides.
// Shared by brook-run, brook-bench, brook-serve and the app.
#pragma once

#include "engine/serving_settings.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace brook {

// The backend a launch runs on (LaunchOptions::device resolved: launch/engine_launcher.h).
enum class Device { Cpu, Cuda };

struct LaunchOptions : ServingSettings {
    std::filesystem::path modelDir;
    std::string servedModelName;  // empty: the folder's name
    int numKvBlocks = 0;          // > 0 overrides the memory-based size (tests)
    bool logStats = false;
    // Called on the loading thread with the fraction done (0..1): weights read and converted,
    // then the KV cache and CUDA graphs. Optional; must be quick.
    std::function<void(double fraction)> onLoadProgress;
};

}  // namespace brook
