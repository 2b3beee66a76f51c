#include "cuda/forward_graphs.h"

#include "cuda/cuda_backend.h"
#include "cuda/cuda_check.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace brook::cuda {

ForwardGraphs::ForwardGraphs(CudaBackend& backend, cudaStream_t stream) : m_backend(backend), m_stream(stream) {}

ForwardGraphs::~ForwardGraphs()
{
    for (const Graphs* graphs : {&m_decode, &m_prefill})
        for (const auto& [bucket, exec] : *graphs) cudaGraphExecDestroy(exec);
}

template <typename UploadInputs>
cudaGraphExec_t ForwardGraphs::capture(UploadInputs uploadInputs, bool decode)
{
    uploadInputs();
    m_backend.forward(decode, m_stream, true);  // warm-up outside capture
    BROOK_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    cudaGraph_t graph = nullptr;
    BROOK_CUDA_CHECK(cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal));
    try {
        m_backend.forward(decode, m_stream, true);
    } catch (...) {
        cudaStreamEndCapture(m_stream, &graph);
        if (graph) cudaGraphDestroy(graph);
        throw;
    }
    BROOK_CUDA_CHECK(cudaStreamEndCapture(m_stream, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    BROOK_CUDA_CHECK(instantiated);
    return exec;
}

void ForwardGraphs::captureDecode(const std::vector<int>& buckets)
{
    if (buckets.empty()) return;
    const auto start = std::chrono::steady_clock::now();
    for (int bucket : buckets) {
        // Dummy inputs: `bucket` one-token sequences at position 0 with no cache writes.
        m_decode[bucket] = capture([&] { m_backend.m_inputs->upload({}, bucket, m_stream); }, true);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spdlog::info("CUDA backend: captured {} decode graphs (batch 1..{}) in {:.1f} s", m_decode.size(),
                 buckets.back(), seconds);
}

void ForwardGraphs::capturePrefill(const std::vector<int>& buckets)
{
    const auto start = std::chrono::steady_clock::now();
    for (int bucket : buckets) {
        // Dummy inputs: the two-sequence layout of `bucket` tokens, all padding.
        m_prefill[bucket] = capture([&] { m_backend.m_inputs->upload({}, 0, m_stream, bucket); }, false);
    }
    if (m_prefill.empty()) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spdlog::info("CUDA backend: captured {} single-sequence prefill graphs (2..{} tokens) in {:.1f} s",
                 m_prefill.size(), m_prefill.rbegin()->first, seconds);
}

int ForwardGraphs::bucketFor(const Graphs& graphs, int n)
{
    auto it = graphs.lower_bound(n);
    return it == graphs.end() ? 0 : it->first;
}

void ForwardGraphs::replayDecode(int bucket, cudaStream_t stream)
{
    BROOK_CUDA_CHECK(cudaGraphLaunch(m_decode.at(bucket), stream));
}

void ForwardGraphs::replayPrefill(int bucket, cudaStream_t stream)
{
    BROOK_CUDA_CHECK(cudaGraphLaunch(m_prefill.at(bucket), stream));
    ++m_prefillReplays;
}

}  // namespace brook::cuda
