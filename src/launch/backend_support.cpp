#include "launch/backend_support.h"

#include <algorithm>

namespace brook {

namespace {

const LaunchOptions& defaults()
{
    static const LaunchOptions d;
    return d;
}

// The error's field: the flag without its dashes, '-' as '_' ("gpu_memory_utilization").
std::string fieldOf(const char* flag)
{
    std::string field = std::string(flag).substr(2);
    std::replace(field.begin(), field.end(), '-', '_');
    return field;
}

}  // namespace

const std::vector<EngineSettingSupport>& engineSettingSupport()
{
    using W = WhenUnsupported;
    // clang-format off
    static const std::vector<EngineSettingSupport> table = {
        {"--device", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.device != defaults().device; }},
        // Values a backend cannot compute in (float16 on the CPU, float32 on CUDA) are refused by
        // the backend's own dtype rule (cpu_dtype.h, cuda_backend.cpp), with the reason.
        {"--dtype", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.dtype != defaults().dtype; }},
        {"--quantization", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.quantization != defaults().quantization; }},
        {"--max-model-len", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.maxModelLen != defaults().maxModelLen; }},
        {"--max-num-seqs", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.maxNumSeqs != defaults().maxNumSeqs; }},
        {"--max-num-batched-tokens", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.maxNumBatchedTokens != defaults().maxNumBatchedTokens; }},
        // vLLM's CPU backend ignores it too; a warning, so one YAML file serves both machines.
        {"--gpu-memory-utilization", false, true, W::Warn,
         "the CPU backend sizes its KV cache by --cpu-kv-cache-space, not by a fraction of GPU memory",
         [](const LaunchOptions& o) { return o.gpuMemoryUtilization != defaults().gpuMemoryUtilization; }},
        // vLLM's VLLM_CPU_KVCACHE_SPACE, which its GPU backends ignore.
        {"--cpu-kv-cache-space", true, false, W::Warn,
         "the CUDA backend sizes its KV cache by --gpu-memory-utilization",
         [](const LaunchOptions& o) { return o.cpuKvCacheBytes != defaults().cpuKvCacheBytes; }},
        {"--block-size", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.blockSize != defaults().blockSize; }},
        {"--num-kv-blocks", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.numKvBlocks != defaults().numKvBlocks; }},
        // What it asks for (no graphs) is how the CPU backend always runs; vLLM's CPU backend
        // likewise runs eagerly whatever the flag says.
        {"--enforce-eager", false, true, W::Warn, "the CPU backend has no graphs and always runs eagerly",
         [](const LaunchOptions& o) { return o.enforceEager != defaults().enforceEager; }},
        {"--enable-prefix-caching", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.enablePrefixCaching != defaults().enablePrefixCaching; }},
        {"--scheduling-policy", true, true, W::Refuse, "",
         [](const LaunchOptions& o) { return o.schedulingPolicy != defaults().schedulingPolicy; }},
        // The CPU backend is batch-invariant whatever the flag says (docs/server.md, "Determinism").
        {"--batch-invariant", true, false, W::Refuse,
         "the CUDA backend has no batch-invariant kernels yet; run on the CPU for answers that do "
         "not depend on the batch",
         [](const LaunchOptions& o) { return o.batchInvariant != defaults().batchInvariant; }},
    };
    // clang-format on
    return table;
}

const EngineSettingSupport* findEngineSetting(const std::string& flag)
{
    for (const auto& row : engineSettingSupport())
        if (flag == row.flag) return &row;
    return nullptr;
}

Result<std::vector<std::string>> checkSettingsForBackend(const LaunchOptions& options, Device device)
{
    const char* backend = device == Device::Cpu ? "the CPU backend" : "the CUDA backend";
    std::vector<std::string> warnings;
    for (const auto& row : engineSettingSupport()) {
        const bool honoured = device == Device::Cpu ? row.onCpu : row.onCuda;
        if (honoured || !row.given(options)) continue;
        if (row.whenUnsupported == WhenUnsupported::Refuse)
            return makeError(ErrorCode::InvalidArgument, fieldOf(row.flag),
                             std::string("not supported by ") + backend + ": " + row.unsupportedWhy);
        warnings.push_back(std::string(row.flag) + " has no effect on " + backend + ": " + row.unsupportedWhy);
    }
    return warnings;
}

}  // namespace brook
