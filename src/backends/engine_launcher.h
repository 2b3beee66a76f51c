// launchEngine: loads a model folder, picks and creates the backend (CUDA when built and a GPU
// is present, else CPU, or as LaunchOptions::device says) and starts an Engine on it.
#pragma once

#include "backends/launch_options.h"
#include "engine/engine.h"
#include "engine/generation_config.h"
#include "engine/model_config.h"
#include "engine/result.h"

#include <memory>

namespace brook {

struct LaunchedEngine {
    std::unique_ptr<Engine> engine;
    ModelConfig modelConfig;
    GenerationDefaults generationDefaults;
    std::string modelName;
};

Result<LaunchedEngine> launchEngine(const LaunchOptions& options);

// The request defaults a model's generation_config.json asks for (vLLM --generation-config auto).
SamplingParams samplingDefaults(const GenerationDefaults& defaults);

// Whether this build has the CUDA backend and a usable GPU is present.
bool cudaAvailable();

} // namespace brook
