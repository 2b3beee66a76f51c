// ForwardGraphs: CUDA graphs of the whole forward (embedding to logits), captured at load and
// replayed so that a step costs one launch instead of ~130-200 kernel launches, whose host-side
// cost (~6 us each) bounds a small step. Two kinds, each one graph per bucket:
//   decode:  n one-token sequences, padded to the smallest batch-size bucket >= n;
//   prefill: ONE sequence of 2..256 new tokens, sampled (a chat turn after a prefix-cache hit, a
//            short prompt), padded to the smallest cuBLASLt row bucket >= its tokens
//            (StepInputs::upload's padToTokens layout).
// Engine thread only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <vector>

namespace brook::cuda {

class CudaBackend;

class ForwardGraphs {
public:
    ForwardGraphs(CudaBackend& backend, cudaStream_t stream);
    ~ForwardGraphs();
    ForwardGraphs(const ForwardGraphs&) = delete;
    ForwardGraphs& operator=(const ForwardGraphs&) = delete;

    // Capture one graph per bucket of the load plan (CudaLoadPlan::decodeGraphs and
    // prefillGraphs), each after a warm-up run, so lazy module loading and cuBLASLt planning
    // happen outside capture.
    void captureDecode(const std::vector<int>& buckets);
    void capturePrefill(const std::vector<int>& buckets);
    // Smallest captured bucket >= n (sequences for decode, tokens for prefill), or 0 when none.
    int decodeBucketFor(int seqs) const { return bucketFor(m_decode, seqs); }
    int prefillBucketFor(int tokens) const { return tokens >= 2 ? bucketFor(m_prefill, tokens) : 0; }
    void replayDecode(int bucket, cudaStream_t stream);
    void replayPrefill(int bucket, cudaStream_t stream);
    size_t count() const { return m_decode.size() + m_prefill.size(); }
    // Prefill replays so far (tests check that a step took the graph).
    int64_t prefillReplays() const { return m_prefillReplays; }

private:
    using Graphs = std::map<int, cudaGraphExec_t>;
    static int bucketFor(const Graphs& graphs, int n);
    // Uploads dummy inputs for the bucket (uploadInputs), runs the forward once, then captures it.
    template <typename UploadInputs>
    cudaGraphExec_t capture(UploadInputs uploadInputs, bool decode);

    CudaBackend& m_backend;
    cudaStream_t m_stream;
    Graphs m_decode, m_prefill;
    int64_t m_prefillReplays = 0;
};

}  // namespace brook::cuda
