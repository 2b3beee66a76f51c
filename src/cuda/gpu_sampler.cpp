// GpuSampler: the host half. Turns each row's SamplingContext into a packed GpuSampleRow plus
// "edits" (one per distinct token a penalty or the min_tokens mask touches, deduplicated here
// in O(prompt + output) with two [V] scratch arrays), uploads them in one pinned copy, runs
// gpu_sampler_kernel.cu (after token_mask_kernel.cu for rows with a structured-output mask) and
// reads every row's (token, logprob, top-N) back in one copy.
// The frequency / presence amount is computed here with the CPU Sampler's exact expression, so
// the kernel only subtracts it.
#include "cuda/gpu_sampler.h"

#include "cuda/cuda_check.h"
#include "cuda/gpu_sampler_kernel.h"
#include "cuda/token_mask_kernel.h"
#include "engine/sampler_math.h"
#include "engine/sampling_params.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace brook::cuda {

static_assert(kGpuMaxTopLogprobs == kMaxLogprobs, "the kernel's top-N capacity is the API's limit");

namespace {

// cudaMallocHost'd memory: the staging side of the one upload and the one download per call.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(size_t bytes) : m_bytes(bytes)
    {
        if (bytes) BROOK_CUDA_CHECK(cudaMallocHost(&m_ptr, bytes));
    }
    ~PinnedBuffer()
    {
        if (m_ptr) cudaFreeHost(m_ptr);
    }
    PinnedBuffer(PinnedBuffer&& o) noexcept
        : m_ptr(std::exchange(o.m_ptr, nullptr)), m_bytes(std::exchange(o.m_bytes, 0))
    {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept
    {
        if (this != &o) {
            if (m_ptr) cudaFreeHost(m_ptr);
            m_ptr = std::exchange(o.m_ptr, nullptr);
            m_bytes = std::exchange(o.m_bytes, 0);
        }
        return *this;
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;

    template <typename T>
    T* as() const
    {
        return static_cast<T*>(m_ptr);
    }
    size_t bytes() const { return m_bytes; }

private:
    void* m_ptr = nullptr;
    size_t m_bytes = 0;
};

constexpr size_t kInitialEditCapacity = 4096;

}  // namespace

struct GpuSampler::Impl {
    int maxRows = 0;
    int vocab = 0;
    int weightShift = 0;
    DeviceBuffer scratch;      // [maxRows, V] uint32 probability bits of the draw
    DeviceBuffer results;      // [maxRows] GpuSampleOut
    PinnedBuffer hostResults;  // [maxRows] GpuSampleOut
    DeviceBuffer inputs;       // [R] GpuSampleRow, then [E] GpuSampleEdit
    PinnedBuffer hostInputs;   // the same, staged
    std::vector<GpuSampleRow> rows;
    std::vector<GpuSampleEdit> edits;
    std::vector<int32_t> editOf;  // [V] index in `edits` of the current row's edit of a token; -1 none
    std::vector<int32_t> counts;  // [V] output occurrences; all zero between rows
    bool warnedTopN = false;
    // Structured-output masks: the rows that carry one, the index of each row's mask among the
    // distinct ones (rows in the same grammar state get the same cached mask: one upload), and
    // the distinct masks, copied straight into the pinned upload.
    std::vector<int32_t> maskRows, maskOf;
    std::vector<const uint32_t*> distinctMasks;

    void addEdits(const SamplingContext& context, const SamplingParams& params);
    void reserveInputs(size_t bytes);
};

// The CPU Sampler's applyPenalties and min_tokens mask, as per-token edits of this row.
void GpuSampler::Impl::addEdits(const SamplingContext& context, const SamplingParams& params)
{
    const size_t begin = edits.size();
    auto inRange = [&](int32_t token) { return token >= 0 && token < vocab; };
    auto editFor = [&](int32_t token) -> GpuSampleEdit& {
        int32_t& slot = editOf[static_cast<size_t>(token)];
        if (slot < 0) {
            slot = static_cast<int32_t>(edits.size());
            GpuSampleEdit edit;
            edit.token = token;
            edits.push_back(edit);
        }
        return edits[static_cast<size_t>(slot)];
    };

    const float repetition = params.repetitionPenalty;
    if (repetition != 1.0f && repetition > 0.0f)
        for (auto tokens : {context.promptTokens, context.outputTokens})
            for (int32_t token : tokens)
                if (inRange(token)) editFor(token).ops |= kEditRepetition;
    if (params.frequencyPenalty != 0.0f || params.presencePenalty != 0.0f) {
        for (int32_t token : context.outputTokens)
            if (inRange(token)) ++counts[static_cast<size_t>(token)];
        for (int32_t token : context.outputTokens) {
            if (!inRange(token) || counts[static_cast<size_t>(token)] == 0) continue;
            GpuSampleEdit& edit = editFor(token);
            edit.ops |= kEditSubtract;
            // Exactly the CPU Sampler's expression (same compiler, same rounding).
            edit.delta = params.frequencyPenalty * static_cast<float>(counts[static_cast<size_t>(token)]) +
                         params.presencePenalty;
            counts[static_cast<size_t>(token)] = 0;
        }
    }
    if (static_cast<int64_t>(context.outputTokens.size()) < params.minTokens)
        for (int32_t token : context.stopTokenIds)
            if (inRange(token)) editFor(token).ops |= kEditMask;

    for (size_t e = begin; e < edits.size(); ++e) editOf[static_cast<size_t>(edits[e].token)] = -1;
}

void GpuSampler::Impl::reserveInputs(size_t bytes)
{
    if (bytes <= inputs.bytes()) return;
    const size_t capacity = std::max(bytes, 2 * inputs.bytes());
    inputs = DeviceBuffer(capacity);
    hostInputs = PinnedBuffer(capacity);
}

GpuSampler::GpuSampler(int maxRows, int vocabSize) : m_impl(std::make_unique<Impl>())
{
    if (maxRows <= 0 || vocabSize <= 0)
        throw CudaError("GpuSampler: needs maxRows > 0 and a vocabulary, got maxRows " + std::to_string(maxRows) +
                        ", V " + std::to_string(vocabSize));
    Impl& d = *m_impl;
    d.maxRows = maxRows;
    d.vocab = vocabSize;
    d.weightShift = samplerWeightShift(vocabSize);
    d.scratch = DeviceBuffer(static_cast<size_t>(maxRows) * static_cast<size_t>(vocabSize) * sizeof(uint32_t));
    d.results = DeviceBuffer(static_cast<size_t>(maxRows) * sizeof(GpuSampleOut));
    d.hostResults = PinnedBuffer(d.results.bytes());
    d.reserveInputs(static_cast<size_t>(maxRows) * sizeof(GpuSampleRow) + kInitialEditCapacity * sizeof(GpuSampleEdit));
    d.editOf.assign(static_cast<size_t>(vocabSize), -1);
    d.counts.assign(static_cast<size_t>(vocabSize), 0);
}

GpuSampler::~GpuSampler() = default;

std::vector<SampleResult> GpuSampler::sample(float* logits, std::span<const SamplingContext> contexts,
                                             cudaStream_t stream)
{
    Impl& d = *m_impl;
    const auto R = static_cast<int>(contexts.size());
    if (R == 0) return {};
    if (R > d.maxRows)
        throw CudaError("GpuSampler: " + std::to_string(R) + " rows in one call, built for at most " +
                        std::to_string(d.maxRows));
    if (!logits) throw CudaError("GpuSampler: null logits");

    static const SamplingParams kDefaults;
    d.rows.assign(static_cast<size_t>(R), GpuSampleRow{});
    d.edits.clear();
    for (int r = 0; r < R; ++r) {
        const SamplingContext& context = contexts[static_cast<size_t>(r)];
        const SamplingParams& params = context.params ? *context.params : kDefaults;
        GpuSampleRow& row = d.rows[static_cast<size_t>(r)];
        row.temperature = params.temperature;
        row.topP = params.topP;
        row.minP = params.minP;
        row.repetitionPenalty = params.repetitionPenalty;
        row.topK = params.topK;
        row.greedy = !(params.temperature > 0.0f) || params.topK == 1 ? 1 : 0;
        row.u = row.greedy ? 0.0 : Sampler::uniform(context.seed, context.step);
        row.logprobs = params.logprobs < 0 ? -1 : std::min(params.logprobs, kMaxLogprobs);
        if (params.logprobs > kMaxLogprobs && !d.warnedTopN) {
            spdlog::warn("GpuSampler: logprobs {} asked, returning the top {}", params.logprobs, kMaxLogprobs);
            d.warnedTopN = true;
        }
        row.editBegin = static_cast<int32_t>(d.edits.size());
        d.addEdits(context, params);
        row.editCount = static_cast<int32_t>(d.edits.size()) - row.editBegin;
    }

    // Structured-output masks ride in the same upload, after the edits: [K] row ids, [K] mask
    // indices, then the [U, W] distinct masks. At batch 64 the masks were 827 KB a step copied
    // twice on the host (into a vector, then into the pinned buffer); most rows share a handful
    // of cached masks.
    const int W = (d.vocab + 31) / 32;
    d.maskRows.clear();
    d.maskOf.clear();
    d.distinctMasks.clear();
    for (int r = 0; r < R; ++r) {
        const std::span<const uint32_t> mask = contexts[static_cast<size_t>(r)].allowedTokens;
        if (mask.empty()) continue;
        if (mask.size() != static_cast<size_t>(W))
            throw CudaError("GpuSampler: a token mask of " + std::to_string(mask.size()) + " words, need " +
                            std::to_string(W));
        const auto known = std::find(d.distinctMasks.begin(), d.distinctMasks.end(), mask.data());
        d.maskRows.push_back(r);
        d.maskOf.push_back(static_cast<int32_t>(known - d.distinctMasks.begin()));
        if (known == d.distinctMasks.end()) d.distinctMasks.push_back(mask.data());
    }
    const size_t rowBytes = d.rows.size() * sizeof(GpuSampleRow);
    const size_t editBytes = d.edits.size() * sizeof(GpuSampleEdit);
    const size_t maskIndexBytes = (d.maskRows.size() * sizeof(int32_t) + 15) / 16 * 16;  // each of the two
    const size_t maskWordsBytes = static_cast<size_t>(W) * sizeof(uint32_t);
    const size_t bytes = rowBytes + editBytes + 2 * maskIndexBytes + d.distinctMasks.size() * maskWordsBytes;
    d.reserveInputs(bytes);
    char* host = d.hostInputs.as<char>();
    std::memcpy(host, d.rows.data(), rowBytes);
    if (editBytes) std::memcpy(host + rowBytes, d.edits.data(), editBytes);
    const size_t maskRowsAt = rowBytes + editBytes, maskOfAt = maskRowsAt + maskIndexBytes,
                 masksAt = maskOfAt + maskIndexBytes;
    if (!d.maskRows.empty()) {
        std::memcpy(host + maskRowsAt, d.maskRows.data(), d.maskRows.size() * sizeof(int32_t));
        std::memcpy(host + maskOfAt, d.maskOf.data(), d.maskOf.size() * sizeof(int32_t));
        for (size_t u = 0; u < d.distinctMasks.size(); ++u)
            std::memcpy(host + masksAt + u * maskWordsBytes, d.distinctMasks[u], maskWordsBytes);
    }
    BROOK_CUDA_CHECK(cudaMemcpyAsync(d.inputs.get(), host, bytes, cudaMemcpyHostToDevice, stream));

    // The mask comes first, as on the CPU: logprobs are those of the masked row.
    if (!d.maskRows.empty()) {
        const char* device = d.inputs.as<char>();
        launch_apply_token_mask(logits, reinterpret_cast<const uint32_t*>(device + masksAt),
                                reinterpret_cast<const int32_t*>(device + maskRowsAt),
                                reinterpret_cast<const int32_t*>(device + maskOfAt),
                                static_cast<int>(d.maskRows.size()), d.vocab, W, stream);
    }
    auto* deviceEdits = reinterpret_cast<GpuSampleEdit*>(d.inputs.as<char>() + rowBytes);
    launch_gpu_sample(logits, d.scratch.as<uint32_t>(), d.inputs.as<GpuSampleRow>(), deviceEdits,
                      d.results.as<GpuSampleOut>(), R, d.vocab, d.weightShift, stream);

    const size_t outBytes = static_cast<size_t>(R) * sizeof(GpuSampleOut);
    BROOK_CUDA_CHECK(
        cudaMemcpyAsync(d.hostResults.as<char>(), d.results.get(), outBytes, cudaMemcpyDeviceToHost, stream));
    BROOK_CUDA_CHECK(cudaStreamSynchronize(stream));

    std::vector<SampleResult> results(static_cast<size_t>(R));
    const GpuSampleOut* out = d.hostResults.as<GpuSampleOut>();
    for (int r = 0; r < R; ++r) {
        const GpuSampleOut& o = out[r];
        SampleResult& result = results[static_cast<size_t>(r)];
        result.token = o.token;
        if (d.rows[static_cast<size_t>(r)].logprobs < 0) continue;
        result.logprob = o.logprob;
        const int n = std::clamp(o.topCount, 0, kGpuMaxTopLogprobs);
        result.topLogprobs.reserve(static_cast<size_t>(n));
        for (int k = 0; k < n; ++k) result.topLogprobs.push_back({o.topTokens[k], o.topLogprobs[k]});
    }
    return results;
}

}  // namespace brook::cuda
