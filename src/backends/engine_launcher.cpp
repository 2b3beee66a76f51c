#include "backends/engine_launcher.h"

#include "engine/cpu/cpu_backend.h"
#include "engine/model_folder.h"
#include "engine/quantized_layer_loader.h"

#ifdef BROOK_HAVE_CUDA
#include "cuda/cuda_backend.h"
#include "cuda/cuda_device.h"
#endif

#include <spdlog/spdlog.h>

#include <algorithm>

namespace brook {

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
    if (d.temperature) p.temperature = *d.temperature;
    if (d.doSample && !*d.doSample) p.temperature = 0.0f;
    if (d.topP) p.topP = *d.topP;
    if (d.topK) p.topK = *d.topK;
    if (d.minP) p.minP = *d.minP;
    if (d.repetitionPenalty) p.repetitionPenalty = *d.repetitionPenalty;
    if (d.presencePenalty) p.presencePenalty = *d.presencePenalty;
    if (d.frequencyPenalty) p.frequencyPenalty = *d.frequencyPenalty;
    return p;
}

Result<LaunchedEngine> launchEngine(const LaunchOptions& options)
{
    auto folder = ModelFolder::load(options.modelDir);
    if (!folder) return makeError(folder.error());

    std::string device = options.device;
    if (device == "auto") device = cudaAvailable() ? "cuda" : "cpu";
    if (device != "cpu" && device != "cuda") return makeError("unknown device '" + device + "' (use cpu, cuda or auto)");

    const ModelConfig& config = folder->config;
    const int maxModelLen = options.maxModelLen > 0 ? options.maxModelLen : config.maxPositionEmbeddings;
    if (maxModelLen > config.maxPositionEmbeddings)
        return makeError("--max-model-len " + std::to_string(maxModelLen) + " exceeds the model's max_position_embeddings (" +
                         std::to_string(config.maxPositionEmbeddings) + ")");

    std::unique_ptr<Backend> backend;
    if (device == "cpu") {
        auto quantization = resolveQuantization(config, options.quantization);
        if (!quantization) return makeError(quantization.error());
        if (quantization->enabled()) spdlog::info("quantization: {}", quantization->describe());
        cpu::CpuBackendOptions cpuOptions;
        cpuOptions.quantization = quantization.value();
        cpuOptions.blockSize = options.blockSize;
        cpuOptions.numKvBlocks = options.numKvBlocks;
        cpuOptions.onLoadProgress = options.onLoadProgress;
        // No need to reserve more than max_num_seqs full-length sequences.
        const int64_t wanted = config.kvBytesPerToken(sizeof(float)) * int64_t(maxModelLen) * options.maxNumSeqs;
        cpuOptions.kvCacheBytes = std::min(options.cpuKvCacheBytes, wanted);
        auto cpuBackend = cpu::CpuBackend::create(config, *folder->checkpoint, cpuOptions);
        if (!cpuBackend) return makeError(cpuBackend.error());
        backend = std::move(cpuBackend).value();
    } else {
#ifdef BROOK_HAVE_CUDA
        auto cudaBackend = cuda::CudaBackend::create(config, *folder->checkpoint, options);
        if (!cudaBackend) return makeError(cudaBackend.error());
        backend = std::move(cudaBackend).value();
#else
        return makeError("this build of Brook has no CUDA backend; use --device cpu");
#endif
    }

    EngineConfig engineConfig;
    engineConfig.modelName = !options.servedModelName.empty() ? options.servedModelName
                                                              : options.modelDir.filename().string();
    if (engineConfig.modelName.empty()) engineConfig.modelName = options.modelDir.parent_path().filename().string();
    engineConfig.maxModelLen = maxModelLen;
    engineConfig.scheduler.maxNumSeqs = options.maxNumSeqs;
    engineConfig.scheduler.maxNumBatchedTokens = options.maxNumBatchedTokens;
    engineConfig.scheduler.policy =
        options.schedulingPolicy == "priority" ? SchedulingPolicy::Priority : SchedulingPolicy::Fcfs;
    engineConfig.logStats = options.logStats;

    std::vector<int32_t> eos = folder->tokenizer->stopTokenIds();
    for (int32_t id : folder->generationDefaults.eosTokenIds)
        if (std::find(eos.begin(), eos.end(), id) == eos.end()) eos.push_back(id);

    const int64_t cacheTokens = int64_t(backend->numKvBlocks()) * backend->blockSize();
    spdlog::info("{} backend: KV cache {} blocks, {} tokens; maximum concurrency for {} tokens per request: {:.2f}x",
                 backend->name(), backend->numKvBlocks(), cacheTokens, maxModelLen, double(cacheTokens) / maxModelLen);

    LaunchedEngine launched;
    launched.modelConfig = config;
    launched.generationDefaults = folder->generationDefaults;
    launched.modelName = engineConfig.modelName;
    launched.engine = std::make_unique<Engine>(engineConfig, std::move(backend), folder->tokenizer, std::move(eos));
    return launched;
}

} // namespace brook
