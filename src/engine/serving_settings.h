// ServingSettings: the serving knobs with vLLM's flag names and meanings, and their defaults, in
// one place. LaunchOptions (what starts an engine) and CapacityInput (what the capacity planner
// sizes) both are these settings plus what each needs besides, so a knob added or a default
// changed here reaches the launcher, the planner, brook-serve's flags and the app's panel alike.
// The values stay as the flags spell them (the front ends' edge); the launcher parses device,
// dtype and scheduling policy into enums before anything below it sees them.
#pragma once

#include "engine/result.h"

#include <cstdint>
#include <string>

namespace brook {

// --device, parsed: "auto" (CUDA when this build has it and a GPU is present), "cpu", "cuda".
enum class DeviceChoice { Auto, Cpu, Cuda };
Result<DeviceChoice> parseDeviceChoice(const std::string& device);

// --dtype, parsed: "auto", "bfloat16" (bf16), "float16" (half, fp16), "float32" (float, fp32).
enum class DTypeChoice { Auto, BFloat16, Float16, Float32 };
Result<DTypeChoice> parseDTypeChoice(const std::string& dtype);
const char* dtypeChoiceName(DTypeChoice dtype);  // the canonical spelling: "auto", "bfloat16", ...

// --scheduling-policy, parsed: "fcfs" (arrival order) or "priority" (lower first, then arrival).
enum class SchedulingPolicy { Fcfs, Priority };
Result<SchedulingPolicy> parseSchedulingPolicy(const std::string& policy);

struct ServingSettings {
    std::string device = "auto";  // auto | cpu | cuda
    std::string dtype = "auto";   // auto | bfloat16 | float16 | float32
    std::string quantization;     // empty | int8 | int4 | awq
    int maxModelLen = 0;          // 0: the model's max_position_embeddings
    int maxNumSeqs = 256;
    int maxNumBatchedTokens = 8192;
    double gpuMemoryUtilization = 0.9;
    int64_t cpuKvCacheBytes = 2LL << 30;  // CPU backend: host memory for the KV cache
    int blockSize = 16;
    bool enforceEager = false;              // CUDA: no graphs
    std::string schedulingPolicy = "fcfs";  // fcfs | priority
    bool enablePrefixCaching = true;        // reuse cached KV blocks of shared prompt prefixes
    // A request's tokens and logprobs the same however it is batched (vLLM's VLLM_BATCH_INVARIANT).
    // The CPU backend always is; CUDA refuses the switch until its kernels are (backend_support.h).
    bool batchInvariant = false;
};

}  // namespace brook
