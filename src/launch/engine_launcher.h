// launchEngine: loads a model folder, picks and creates the backend (CUDA when built and a GPU
// is present, else CPU, or as LaunchOptions::device says) and starts an Engine on it.
#pragma once

#include "launch/launch_options.h"
#include "engine/engine.h"
#include "engine/generation_config.h"
#include "engine/model_config.h"
#include "engine/model_folder.h"
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
// The same on a folder the caller has already loaded (the app reads it first for its memory
// estimate; a folder is parsed once per load). options.modelDir names the model.
Result<LaunchedEngine> launchEngine(const LaunchOptions& options, ModelFolder folder);

// The request defaults a model's generation_config.json asks for (vLLM --generation-config auto).
SamplingParams samplingDefaults(const GenerationDefaults& defaults);

// Whether this build has the CUDA backend and a usable GPU is present.
bool cudaAvailable();

// The device a launch runs on: "cpu", "cuda", or "auto" (CUDA when available), parsed once here.
Result<Device> resolveDevice(const std::string& device);

}  // namespace brook
