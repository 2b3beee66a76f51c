#include "launch/engine_launcher.h"

#include "launch/backend_support.h"
#include "launch/cpu_dtype.h"

#include "engine/utf8_path.h"

#include "engine/capacity_planner.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/model_folder.h"
#include "engine/models/model_family.h"
#include "engine/quantized_layer_loader.h"

#ifdef BROOK_HAVE_CUDA
#include "cuda/cuda_backend.h"
#include "cuda/cuda_device.h"
#endif

#include <spdlog/spdlog.h>

#include <algorithm>

namespace brook {

namespace {
// The CPU backend's warm-up pass at load (CpuBackendOptions::warmupTokens).
constexpr int kCpuWarmupTokens = 512;
}  // namespace

bool cudaAvailable()
{
#ifdef BROOK_HAVE_CUDA
    return cuda::cudaDeviceCount() > 0;
#else
    return false;
#endif
}

SamplingParams samplingDefaults(const GenerationDefaults& d)
{
    SamplingParams p;
    applyGenerationDefaults(d, p);
    return p;
}

Result<Device> resolveDevice(const std::string& device)
{
    auto choice = parseDeviceChoice(device);
    if (!choice) return makeError(choice.failure());
    switch (*choice) {
    case DeviceChoice::Cpu: return Device::Cpu;
    case DeviceChoice::Cuda: return Device::Cuda;
    case DeviceChoice::Auto: break;
    }
    return cudaAvailable() ? Device::Cuda : Device::Cpu;
}

Result<LaunchedEngine> launchEngine(const LaunchOptions& options)
{
    auto folder = ModelFolder::load(options.modelDir);
    if (!folder) return makeError(folder.failure());
    return launchEngine(options, std::move(folder).value());
}

Result<LaunchedEngine> launchEngine(const LaunchOptions& options, ModelFolder folder)
{
    auto device = resolveDevice(options.device);
    if (!device) return makeError(device.failure());
    if (*device == Device::Cuda && !familyOf(folder.config).cudaKernels && options.device == "auto") {
        spdlog::info("{} models run on the CPU backend (the CUDA backend has no kernels for them yet)",
                     familyOf(folder.config).name);
        device = Device::Cpu;
    }
    auto ignored = checkSettingsForBackend(options, *device);
    if (!ignored) return makeError(ignored.failure());
    for (const std::string& warning : *ignored) spdlog::warn("{}", warning);

    const ModelConfig& config = folder.config;
    const int maxModelLen = options.maxModelLen > 0 ? options.maxModelLen : config.maxPositionEmbeddings;
    if (maxModelLen > config.maxPositionEmbeddings)
        return makeError(ErrorCode::InvalidArgument, "max_model_len",
                         "a context of " + std::to_string(maxModelLen) +
                             " tokens exceeds the model's max_position_embeddings (" +
                             std::to_string(config.maxPositionEmbeddings) + ")");

    auto dtype = parseDTypeChoice(options.dtype);
    if (!dtype) return makeError(dtype.failure());
    auto quantization = resolveQuantization(config, options.quantization);
    if (!quantization) return makeError(ErrorCode::InvalidArgument, "quantization", quantization.error());
    if (quantization->enabled()) spdlog::info("quantization: {}", quantization->describe());

    std::unique_ptr<Backend> backend;
    if (*device == Device::Cpu) {
        auto embedding = folder.checkpoint->require("model.embed_tokens.weight");
        if (!embedding) return makeError(embedding.failure());
        auto arithmetic = cpuArithmeticFor(*dtype, (*embedding)->dtype, quantization->enabled());
        if (!arithmetic) return makeError(arithmetic.failure());
        cpu::CpuBackendOptions cpuOptions;
        cpuOptions.arithmetic = *arithmetic;
        cpuOptions.quantization = quantization.value();
        cpuOptions.blockSize = options.blockSize;
        cpuOptions.numKvBlocks = options.numKvBlocks;
        cpuOptions.onLoadProgress = options.onLoadProgress;
        cpuOptions.kvCacheBytes = CapacityPlanner::cpuKvCacheBytes(config, options, maxModelLen);
        // A chat turn's prompt: enough to fault in what typical first requests touch, while the
        // pass stays a fraction of the load (~0.5 s for ERNIE-0.3B on two cores).
        cpuOptions.warmupTokens = std::min(options.maxNumBatchedTokens, kCpuWarmupTokens);
        auto cpuBackend = cpu::CpuBackend::create(config, *folder.checkpoint, cpuOptions);
        if (!cpuBackend) return makeError(cpuBackend.failure());
        backend = std::move(cpuBackend).value();
    } else {
#ifdef BROOK_HAVE_CUDA
        cuda::CudaBackendOptions cudaOptions;
        cudaOptions.dtype = *dtype;
        cudaOptions.quantization = quantization.value();
        cudaOptions.maxModelLen = maxModelLen;
        cudaOptions.maxNumSeqs = options.maxNumSeqs;
        cudaOptions.maxNumBatchedTokens = options.maxNumBatchedTokens;
        cudaOptions.blockSize = options.blockSize;
        cudaOptions.numKvBlocks = options.numKvBlocks;
        cudaOptions.gpuMemoryUtilization = options.gpuMemoryUtilization;
        cudaOptions.enforceEager = options.enforceEager;
        cudaOptions.onLoadProgress = options.onLoadProgress;
        auto cudaBackend = cuda::CudaBackend::create(config, *folder.checkpoint, cudaOptions);
        if (!cudaBackend) return makeError(cudaBackend.failure());
        backend = std::move(cudaBackend).value();
#else
        return makeError(ErrorCode::InvalidArgument, "device", "this build of Brook has no CUDA backend; use the CPU");
#endif
    }

    EngineConfig engineConfig;
    engineConfig.modelName =
        !options.servedModelName.empty() ? options.servedModelName : utf8FromPath(options.modelDir.filename());
    if (engineConfig.modelName.empty())
        engineConfig.modelName = utf8FromPath(options.modelDir.parent_path().filename());
    engineConfig.maxModelLen = maxModelLen;
    engineConfig.scheduler.maxNumSeqs = options.maxNumSeqs;
    engineConfig.scheduler.maxNumBatchedTokens = options.maxNumBatchedTokens;
    auto policy = parseSchedulingPolicy(options.schedulingPolicy);
    if (!policy) return makeError(policy.failure());
    engineConfig.scheduler.policy = *policy;
    engineConfig.logStats = options.logStats;
    engineConfig.enablePrefixCaching = options.enablePrefixCaching;

    std::vector<int32_t> eos = folder.tokenizer->stopTokenIds();
    for (int32_t id : folder.generationDefaults.eosTokenIds)
        if (std::find(eos.begin(), eos.end(), id) == eos.end()) eos.push_back(id);

    const int64_t cacheTokens = int64_t(backend->numKvBlocks()) * backend->blockSize();
    spdlog::info("{} backend: KV cache {} blocks, {} tokens; maximum concurrency for {} tokens per request: {:.2f}x",
                 backend->name(), backend->numKvBlocks(), cacheTokens, maxModelLen, double(cacheTokens) / maxModelLen);

    LaunchedEngine launched;
    launched.modelConfig = config;
    launched.generationDefaults = folder.generationDefaults;
    launched.modelName = engineConfig.modelName;
    launched.engine = std::make_unique<Engine>(engineConfig, std::move(backend), folder.tokenizer, std::move(eos));
    return launched;
}

}  // namespace brook
