// LaunchOptions: how to bring up an engine on a model folder, with vLLM's flag meanings.
// Shared by brook-run, brook-bench, brook-serve and the app.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace brook {

struct LaunchOptions {
    std::filesystem::path modelDir;
    std::string servedModelName;          // empty: the folder's name
    std::string device = "auto";          // auto | cpu | cuda
    std::string dtype = "auto";           // auto | bfloat16 | float16 | float32
    std::string quantization;             // empty | int8 | int4 | awq
    int maxModelLen = 0;                  // 0: the model's max_position_embeddings
    int maxNumSeqs = 256;
    int maxNumBatchedTokens = 8192;
    double gpuMemoryUtilization = 0.9;
    int64_t cpuKvCacheBytes = 2LL << 30;  // CPU backend: host memory for the KV cache
    int blockSize = 16;
    int numKvBlocks = 0;                  // > 0 overrides the memory-based size (tests)
    bool enforceEager = false;            // CUDA: no graphs
    bool logStats = false;
    std::string schedulingPolicy = "fcfs"; // fcfs | priority
    // Called on the loading thread with the fraction done (0..1): weights read and converted,
    // then the KV cache and CUDA graphs. Optional; must be quick.
    std::function<void(double fraction)> onLoadProgress;
};

} // namespace brook
