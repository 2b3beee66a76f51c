// StepInputs: the per-step metadata the kernels read (token ids, positions, cache slots,
// query offsets, context lengths, sampled rows, block tables), packed on the host in pinned
// memory and copied to fixed device buffers with two async copies. Fixed device addresses
// are what lets a captured CUDA graph be replayed with new inputs.
#pragma once

#include "cuda/device_buffer.h"
#include "cuda/step_layout.h"
#include "engine/backend.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <span>

namespace brook::cuda {

class StepInputs {
public:
    // capacity: stepCapacity() of the engine's limits.
    StepInputs(StepShape capacity, int maxBlocksPerSeq, int blockSize);
    ~StepInputs();
    StepInputs(const StepInputs&) = delete;
    StepInputs& operator=(const StepInputs&) = delete;

    // Packs the batch (padded with dummy one-token sequences up to padToSeqs, whose cache
    // writes are skipped) and copies it to the device on `stream`.
    // padToTokens > 0 (a single-sequence prefill graph, padToSeqs 0): the layout is always two
    // sequences and padToTokens tokens: the batch's one sequence (or, with an empty batch, a
    // one-token dummy), then a padding sequence of the remaining tokens (context 0: no attention,
    // no cache writes, not sampled), so every launch shape depends on padToTokens alone.
    // The layout's rule is stepShape() (step_layout.h); a shape past the capacity throws CudaError.
    void upload(std::span<const BatchSequence> batch, int padToSeqs, cudaStream_t stream, int padToTokens = 0);

    int numTokens() const { return m_numTokens; }
    int numSeqs() const { return m_numSeqs; }
    int numSampled() const { return m_numSampled; }
    int maxQueryLen() const { return m_maxQueryLen; }
    int maxContextLen() const { return m_maxContextLen; }
    int maxBlocksPerSeq() const { return m_maxBlocksPerSeq; }

    // Device pointers (fixed for the object's lifetime).
    const int32_t* ids() const { return m_ids; }
    const int32_t* positions() const { return m_positions; }
    const int32_t* slotMapping() const { return m_slots; }
    const int32_t* queryStart() const { return m_queryStart; }
    const int32_t* contextLens() const { return m_contextLens; }
    const int32_t* sampleRows() const { return m_sampleRows; }
    const int32_t* blockTables() const { return m_blockTables; }

private:
    StepShape m_capacity;
    int m_maxBlocksPerSeq, m_blockSize;
    int m_numTokens = 0, m_numSeqs = 0, m_numSampled = 0, m_maxQueryLen = 0, m_maxContextLen = 0;
    DeviceBuffer m_device;      // packed arrays, then the block table
    int32_t* m_host = nullptr;  // pinned mirror
    size_t m_packedInts = 0;    // ints before the block table
    int32_t *m_ids, *m_positions, *m_slots, *m_queryStart, *m_contextLens, *m_sampleRows, *m_blockTables;
};

}  // namespace brook::cuda
