// DecodeGraphs: CUDA graphs of the whole decode forward (embedding to logits), one per
// batch-size bucket up to max_num_seqs. A decode step of n sequences is padded to the
// smallest bucket >= n and replayed: one launch instead of ~130 kernel launches.
// Engine thread only.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <vector>

namespace brook::cuda {

class CudaBackend;

class DecodeGraphs {
public:
    // Buckets 1, 2, 4, 8, then every 8 up to maxSeqs (vLLM's capture sizes).
    static std::vector<int> bucketsFor(int maxSeqs);

    DecodeGraphs(CudaBackend& backend, cudaStream_t stream);
    ~DecodeGraphs();
    DecodeGraphs(const DecodeGraphs&) = delete;
    DecodeGraphs& operator=(const DecodeGraphs&) = delete;

    // Captures one graph per bucket (after a warm-up run of each, so lazy module loading and
    // cuBLASLt planning happen outside capture).
    void captureAll(int maxSeqs);
    // Smallest captured bucket >= n, or 0 when none.
    int bucketFor(int n) const;
    void replay(int bucket, cudaStream_t stream);
    size_t count() const { return m_graphs.size(); }

private:
    CudaBackend& m_backend;
    cudaStream_t m_stream;
    std::map<int, cudaGraphExec_t> m_graphs;
};

}  // namespace brook::cuda
