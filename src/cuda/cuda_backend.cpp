#include "cuda/cuda_backend.h"

#include "cuda/cuda_check.h"
#include "cuda/cuda_device.h"
#include "cuda/load_plan.h"
#include "cuda/stream_timer.h"
#include "engine/capacity_planner.h"
#include "engine/models/model_family.h"
#include "engine/rope_frequencies.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace brook::cuda {

namespace {

double gib(int64_t bytes) { return double(bytes) / double(1ull << 30); }

std::string formatGib(int64_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", gib(bytes));
    return text;
}

Result<ElementType> chooseElementType(DTypeChoice dtype)
{
    const bool bf16 = cudaDeviceHasBf16();
    switch (dtype) {
    case DTypeChoice::Auto: return bf16 ? ElementType::BF16 : ElementType::F16;
    case DTypeChoice::BFloat16:
        if (!bf16)
            return makeError(ErrorCode::InvalidArgument, "dtype",
                             "bfloat16 needs a GPU of compute capability 8.0 or newer; this one is " +
                                 cudaDeviceDescription() + ": use float16");
        return ElementType::BF16;
    case DTypeChoice::Float16: return ElementType::F16;
    case DTypeChoice::Float32: break;
    }
    return makeError(ErrorCode::InvalidArgument, "dtype",
                     "the CUDA backend computes in bfloat16 or float16; float32 runs on the CPU");
}

}  // namespace

Result<std::unique_ptr<CudaBackend>> CudaBackend::create(const ModelConfig& config, const Checkpoint& checkpoint,
                                                         const CudaBackendOptions& options)
{
    if (cudaDeviceCount() == 0) return makeError(ErrorCode::InvalidArgument, "device", "no CUDA GPU was found");
    setCudaFeatures(options.features);
    if (auto valid = checkpoint.validate(config); !valid) return makeError(valid.failure());
    if (!familyOf(config).cudaKernels)
        return makeError(ErrorCode::InvalidArgument, "device",
                         "the CUDA backend does not run " + std::string(familyOf(config).name) +
                             " models yet; the CPU runs them (--device cpu)");
    if (config.headDim != 32 && config.headDim != 64 && config.headDim != 128)
        return makeError(ErrorCode::InvalidArgument, "device",
                         "head_dim " + std::to_string(config.headDim) +
                             " is not supported by the CUDA attention kernels (32, 64 or 128); the CPU runs it");
    auto type = chooseElementType(options.dtype);
    if (!type) return makeError(type.failure());

    size_t free0 = 0, total = 0;
    BROOK_CUDA_CHECK(cudaMemGetInfo(&free0, &total));
    spdlog::info("CUDA backend: {}, {} free, dtype {}", cudaDeviceDescription(), formatGib(int64_t(free0)),
                 elementTypeName(*type));
    std::unique_ptr<CudaBackend> backend;
    try {
        const auto& report = options.onLoadProgress;
        auto weights = CudaWeights::upload(
            checkpoint, config, *type,
            [&](double f) {
                if (report) report(0.75 * f);
            },
            options.quantization);
        if (!weights) return weights.failure();
        backend.reset(new CudaBackend(config, *type, std::move(weights).value(), options));
        backend->m_deviceTotal = int64_t(total);

        // Everything the load runs, within the engine's limits (load_plan.h).
        const CudaLoadPlan plan =
            planCudaLoad(backend->m_limits, backend->m_maxModelLen, !options.enforceEager, options.features.prefillGraphs);
        // Profile: a forward at max_num_batched_tokens over a temporary cache measures what
        // activations, workspaces and library handles really take.
        const int profileSeqs = int(plan.profileSequences.size());
        const int blocksPerSeq = (*std::max_element(plan.profileSequences.begin(), plan.profileSequences.end()) +
                                  backend->m_blockSize - 1) /
                                 backend->m_blockSize;
        const int64_t blockBytes = config.kvBytesPerToken(2) * backend->m_blockSize;
        if (auto kv = backend->allocateKvCache(blockBytes * blocksPerSeq * profileSeqs); !kv)
            return kv.failure();
        std::vector<std::vector<int32_t>> tokens(static_cast<size_t>(profileSeqs)),
            tables(static_cast<size_t>(profileSeqs));
        std::vector<BatchSequence> batch;
        for (int s = 0; s < profileSeqs; ++s) {
            tokens[s].assign(size_t(plan.profileSequences[size_t(s)]), 1);
            for (int b = 0; b < blocksPerSeq; ++b) tables[s].push_back(s * blocksPerSeq + b);
            batch.push_back({tokens[s], 0, tables[s], true, {}});
        }
        backend->run(batch);
        BROOK_CUDA_CHECK(cudaStreamSynchronize(backend->m_stream));
        size_t free1 = 0;
        BROOK_CUDA_CHECK(cudaMemGetInfo(&free1, &total));
        const int64_t profileKv = int64_t(backend->m_kvCache.bytes());
        backend->m_kvCache = DeviceBuffer();
        const int64_t used = int64_t(free0) - int64_t(free1) - profileKv;  // weights + activations + handles
        const int64_t graphReserve = CapacityPlanner::cudaGraphReserveBytes(options.enforceEager);
        int64_t kvBytes =
            CapacityPlanner::cudaKvCacheBytes(int64_t(total), options.gpuMemoryUtilization, options.enforceEager, used);
        const int64_t freeNow = int64_t(free1) + profileKv - graphReserve - (128ll << 20);
        if (kvBytes > freeNow) {
            spdlog::warn("other processes use GPU memory: the KV cache gets {} instead of {}", formatGib(freeNow),
                         formatGib(kvBytes));
            kvBytes = freeNow;
        }
        if (options.numKvBlocks > 0) kvBytes = std::min<int64_t>(kvBytes, blockBytes * options.numKvBlocks);
        const int64_t oneSequence =
            blockBytes * ((backend->m_maxModelLen + backend->m_blockSize - 1) / backend->m_blockSize);
        if (options.numKvBlocks == 0 && kvBytes < oneSequence) {
            char text[640];
            std::snprintf(text, sizeof text,
                          "not enough GPU memory for the KV cache: %.0f%% of %.2f GiB leaves %.2f GiB after %.2f GiB "
                          "of weights and %.2f GiB of activations, but one sequence of %d tokens needs %.2f GiB",
                          options.gpuMemoryUtilization * 100.0, gib(int64_t(total)), gib(std::max<int64_t>(kvBytes, 0)),
                          gib(int64_t(backend->m_weights.bytes())), gib(used - int64_t(backend->m_weights.bytes())),
                          backend->m_maxModelLen, gib(oneSequence));
            return makeError(ErrorCode::OutOfMemory, "gpu_memory_utilization", text);
        }
        if (report) report(0.85);
        if (auto kv = backend->allocateKvCache(kvBytes); !kv) return kv.failure();
        backend->m_numBlocks = int(kvBytes / blockBytes);
        const int64_t cacheTokens = int64_t(backend->m_numBlocks) * backend->m_blockSize;
        spdlog::info("CUDA backend: weights {}, activations {}, KV cache {} ({} blocks, {} tokens); maximum "
                     "concurrency for {} tokens per request: {:.2f}x",
                     formatGib(int64_t(backend->m_weights.bytes())),
                     formatGib(used - int64_t(backend->m_weights.bytes())), formatGib(kvBytes), backend->m_numBlocks,
                     cacheTokens, backend->m_maxModelLen, double(cacheTokens) / backend->m_maxModelLen);
        if (!options.enforceEager) {
            backend->m_graphs = std::make_unique<ForwardGraphs>(*backend, backend->m_stream);
            backend->m_graphs->captureDecode(plan.decodeGraphs);
            backend->m_graphs->capturePrefill(plan.prefillGraphs);
        }
        if (options.features.padGemmRows) {
            const auto warmStart = std::chrono::steady_clock::now();
            backend->warmUpGemms();
            spdlog::info("CUDA backend: GEMMs planned for every prompt-length bucket up to {} tokens in {:.2f} s",
                         backend->m_maxTokens,
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - warmStart).count());
        }
        if (report) report(1.0);
    } catch (const CudaError& e) {
        if (e.outOfMemory())
            return makeError(ErrorCode::OutOfMemory, "max_num_batched_tokens",
                             std::string("the GPU ran out of memory while loading (") + e.what() + ")");
        return makeError(std::string("CUDA error while loading: ") + e.what());
    }
    return backend;
}

CudaBackend::CudaBackend(ModelConfig config, ElementType type, CudaWeights weights, const CudaBackendOptions& options)
    : m_config(std::move(config)), m_type(type), m_weights(std::move(weights)), m_blockSize(options.blockSize),
      m_limits{options.maxNumBatchedTokens, options.maxNumSeqs}, m_maxTokens(stepCapacity(m_limits).tokens),
      m_maxSeqs(stepCapacity(m_limits).sampled),
      m_maxModelLen(options.maxModelLen > 0 ? options.maxModelLen : m_config.maxPositionEmbeddings),
      m_enforceEager(options.enforceEager)
{
    BROOK_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    m_gemm = std::make_unique<CublasLtGemm>();
    // Plans per bucket of prompt length; allocateActivations sizes the buffers for padded rows.
    m_gemm->setPadRows(options.features.padGemmRows);
    const int maxBlocksPerSeq = (m_maxModelLen + m_blockSize - 1) / m_blockSize;
    m_inputs = std::make_unique<StepInputs>(stepCapacity(m_limits), maxBlocksPerSeq, m_blockSize);
    m_sampler = std::make_unique<GpuSampler>(m_maxSeqs, m_config.vocabSize);
    const std::vector<float> invFreq = m_config.ropeInverseFrequencies();
    m_invFreq = DeviceBuffer(invFreq.size() * sizeof(float));
    BROOK_CUDA_CHECK(
        cudaMemcpy(m_invFreq.get(), invFreq.data(), invFreq.size() * sizeof(float), cudaMemcpyHostToDevice));
    allocateActivations();
}

CudaBackend::~CudaBackend()
{
    m_graphs.reset();
    if (m_stream) cudaStreamDestroy(m_stream);
}

Result<void> CudaBackend::allocateKvCache(int64_t kvBytes)
{
    const int64_t blockBytes = m_config.kvBytesPerToken(2) * m_blockSize;
    const int64_t blocks = kvBytes / blockBytes;
    m_kvCache = DeviceBuffer();
    m_kvCache = DeviceBuffer(size_t(blocks * blockBytes));
    m_numBlocks = int(blocks);
    return {};
}

BackendMemory CudaBackend::memory() const
{
    BackendMemory m;
    m.weightsBytes = int64_t(m_weights.bytes());
    m.kvCacheBytes = int64_t(m_kvCache.bytes());
    m.activationsBytes = m_activationBytes;
    size_t freeBytes = 0, total = 0;
    if (cudaMemGetInfo(&freeBytes, &total) == cudaSuccess) {
        m.deviceTotalBytes = int64_t(total);
        m.deviceFreeBytes = int64_t(freeBytes);
    }
    return m;
}

void CudaBackend::prepareStep(std::span<const BatchSequence> batch)
{
    m_preparedData = nullptr;
    launchForward(upload(batch));
    m_preparedData = batch.data();
    m_preparedSize = batch.size();
}

int CudaBackend::run(std::span<const BatchSequence> batch)
{
    const bool prepared = m_preparedData && m_preparedData == batch.data() && m_preparedSize == batch.size();
    m_preparedData = nullptr;
    if (!prepared) launchForward(upload(batch));
    int sampled = 0;
    for (const auto& b : batch) sampled += b.sample ? 1 : 0;
    return sampled;
}

CudaBackend::StepLaunch CudaBackend::upload(std::span<const BatchSequence> batch)
{
    StepLaunch launch;
    launch.decode = !batch.empty();
    for (const auto& b : batch) launch.decode = launch.decode && b.tokens.size() == 1 && b.sample;
    launch.bucket = launch.decode && m_graphs ? m_graphs->decodeBucketFor(int(batch.size())) : 0;
    if (!launch.decode && m_graphs && batch.size() == 1 && batch[0].sample)
        launch.prefillBucket = m_graphs->prefillBucketFor(int(batch[0].tokens.size()));
    m_inputs->upload(batch, launch.bucket, m_stream, launch.prefillBucket);
    return launch;
}

void CudaBackend::launchForward(const StepLaunch& launch)
{
    if (launch.bucket) m_graphs->replayDecode(launch.bucket, m_stream);
    else if (launch.prefillBucket) m_graphs->replayPrefill(launch.prefillBucket, m_stream);
    else forward(launch.decode, m_stream);
}

double CudaBackend::timeForward(std::span<const BatchSequence> batch, int iterations)
{
    const StepLaunch launch = upload(batch);
    return microsecondsPerRun(m_stream, iterations, [&] { launchForward(launch); });
}

std::vector<SampleResult> CudaBackend::step(std::span<const BatchSequence> batch)
{
    const int rows = run(batch);
    std::vector<SamplingContext> contexts;
    contexts.reserve(size_t(rows));
    for (const auto& b : batch)
        if (b.sample) contexts.push_back(b.sampling);
    return m_sampler->sample(m_logits.as<float>(), contexts, m_stream);
}

std::vector<float> CudaBackend::logits(std::span<const BatchSequence> batch)
{
    const int rows = run(batch);
    std::vector<float> out(size_t(rows) * m_config.vocabSize);
    BROOK_CUDA_CHECK(
        cudaMemcpyAsync(out.data(), m_logits.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost, m_stream));
    BROOK_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    return out;
}

}  // namespace brook::cuda
