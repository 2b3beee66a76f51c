#include "cuda/decode_graphs.h"

#include "cuda/cuda_backend.h"
#include "cuda/cuda_check.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace brook::cuda {

std::vector<int> DecodeGraphs::bucketsFor(int maxSeqs)
{
    std::vector<int> buckets;
    for (int b : {1, 2, 4, 8})
        if (b <= maxSeqs) buckets.push_back(b);
    for (int b = 16; b <= maxSeqs; b += 8) buckets.push_back(b);
    if (buckets.empty() || buckets.back() != maxSeqs) buckets.push_back(maxSeqs);
    return buckets;
}

DecodeGraphs::DecodeGraphs(CudaBackend& backend, cudaStream_t stream) : m_backend(backend), m_stream(stream) {}

DecodeGraphs::~DecodeGraphs()
{
    for (auto& [bucket, exec] : m_graphs) cudaGraphExecDestroy(exec);
}

void DecodeGraphs::captureAll(int maxSeqs)
{
    const auto start = std::chrono::steady_clock::now();
    for (int bucket : bucketsFor(maxSeqs)) {
        // Dummy inputs: `bucket` one-token sequences at position 0 with no cache writes.
        m_backend.m_inputs->upload({}, bucket, m_stream);
        m_backend.forward(true, m_stream);  // warm-up outside capture
        BROOK_CUDA_CHECK(cudaStreamSynchronize(m_stream));
        cudaGraph_t graph = nullptr;
        BROOK_CUDA_CHECK(cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal));
        try {
            m_backend.forward(true, m_stream);
        } catch (...) {
            cudaStreamEndCapture(m_stream, &graph);
            if (graph) cudaGraphDestroy(graph);
            throw;
        }
        BROOK_CUDA_CHECK(cudaStreamEndCapture(m_stream, &graph));
        cudaGraphExec_t exec = nullptr;
        BROOK_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        cudaGraphDestroy(graph);
        m_graphs[bucket] = exec;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spdlog::info("CUDA backend: captured {} decode graphs (batch 1..{}) in {:.1f} s", m_graphs.size(), maxSeqs,
                 seconds);
}

int DecodeGraphs::bucketFor(int n) const
{
    auto it = m_graphs.lower_bound(n);
    return it == m_graphs.end() ? 0 : it->first;
}

void DecodeGraphs::replay(int bucket, cudaStream_t stream)
{
    BROOK_CUDA_CHECK(cudaGraphLaunch(m_graphs.at(bucket), stream));
}

}  // namespace brook::cuda
