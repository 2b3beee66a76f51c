#include "cuda/step_inputs.h"

#include "cuda/cuda_check.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace brook::cuda {

StepInputs::StepInputs(StepShape capacity, int maxBlocksPerSeq, int blockSize)
    : m_capacity(capacity), m_maxBlocksPerSeq(maxBlocksPerSeq), m_blockSize(blockSize)
{
    const int maxTokens = capacity.tokens, maxSeqs = capacity.seqs;
    // ids, positions, slots: tokens each; queryStart: seqs + 1; contextLens: seqs; sampleRows: sampled.
    m_packedInts = size_t(3) * maxTokens + size_t(2) * maxSeqs + 1 + size_t(capacity.sampled);
    const size_t tableInts = size_t(maxSeqs) * maxBlocksPerSeq;
    m_device = DeviceBuffer((m_packedInts + tableInts) * sizeof(int32_t));
    BROOK_CUDA_CHECK(cudaMallocHost(&m_host, (m_packedInts + tableInts) * sizeof(int32_t)));
    int32_t* d = m_device.as<int32_t>();
    m_ids = d;
    m_positions = m_ids + maxTokens;
    m_slots = m_positions + maxTokens;
    m_queryStart = m_slots + maxTokens;
    m_contextLens = m_queryStart + maxSeqs + 1;
    m_sampleRows = m_contextLens + maxSeqs;
    m_blockTables = d + m_packedInts;
    // Padding rows of the table read block 0 (valid memory whose values are ignored).
    BROOK_CUDA_CHECK(cudaMemset(m_blockTables, 0, tableInts * sizeof(int32_t)));
}

StepInputs::~StepInputs()
{
    if (m_host) cudaFreeHost(m_host);
}

void StepInputs::upload(std::span<const BatchSequence> batch, int padToSeqs, cudaStream_t stream, int padToTokens)
{
    const int realSeqs = int(batch.size());
    StepShape shape;
    try {
        shape = stepShape(batch, padToSeqs, padToTokens);
    } catch (const std::invalid_argument& e) {
        throw CudaError(e.what());
    }
    if (!fits(shape, m_capacity))
        throw CudaError("step of " + std::to_string(shape.tokens) + " tokens / " + std::to_string(shape.seqs) +
                        " sequences / " + std::to_string(shape.sampled) + " sampled exceeds the preallocated " +
                        std::to_string(m_capacity.tokens) + " / " + std::to_string(m_capacity.seqs) + " / " +
                        std::to_string(m_capacity.sampled));
    const int seqs = shape.seqs;
    const int dummySeqs = seqs - realSeqs - (padToTokens > 0 ? kPaddingSequences : 0);

    int32_t* ids = m_host;
    int32_t* positions = ids + m_capacity.tokens;
    int32_t* slots = positions + m_capacity.tokens;
    int32_t* queryStart = slots + m_capacity.tokens;
    int32_t* contextLens = queryStart + m_capacity.seqs + 1;
    int32_t* sampleRows = contextLens + m_capacity.seqs;
    int32_t* table = m_host + m_packedInts;

    int row = 0, sampled = 0;
    m_maxQueryLen = 1;
    m_maxContextLen = 1;
    int tableWidth = 1;
    for (int s = 0; s < realSeqs; ++s) {
        const BatchSequence& b = batch[s];
        queryStart[s] = row;
        const int n = int(b.tokens.size());
        for (int i = 0; i < n; ++i, ++row) {
            const int position = b.startPosition + i;
            ids[row] = b.tokens[i];
            positions[row] = position;
            slots[row] = b.blockTable[position / m_blockSize] * m_blockSize + position % m_blockSize;
        }
        contextLens[s] = b.startPosition + n;
        if (b.sample) sampleRows[sampled++] = row - 1;
        m_maxQueryLen = std::max(m_maxQueryLen, n);
        m_maxContextLen = std::max(m_maxContextLen, contextLens[s]);
        tableWidth = std::max(tableWidth, (contextLens[s] + m_blockSize - 1) / m_blockSize);
    }
    for (int s = realSeqs; s < realSeqs + dummySeqs; ++s, ++row) {  // one token, no cache write, no attention
        queryStart[s] = row;
        ids[row] = 0;
        positions[row] = 0;
        slots[row] = -1;
        contextLens[s] = 0;
        sampleRows[sampled++] = row;
    }
    if (padToTokens > 0) {  // the rest of the graph's tokens: one sequence that is never sampled
        queryStart[seqs - 1] = row;
        for (; row < padToTokens; ++row) {
            ids[row] = 0;
            positions[row] = 0;
            slots[row] = -1;
        }
        contextLens[seqs - 1] = 0;
    }
    queryStart[seqs] = row;
    // Only the used width of each table row travels; the device row stride stays maxBlocksPerSeq.
    for (int s = 0; s < seqs; ++s) {
        int32_t* dst = table + size_t(s) * tableWidth;
        if (s < realSeqs) {
            const auto& bt = batch[s].blockTable;
            const int have = std::min<int>(int(bt.size()), tableWidth);
            std::memcpy(dst, bt.data(), sizeof(int32_t) * size_t(have));
            std::fill(dst + have, dst + tableWidth, 0);
        } else {
            std::fill(dst, dst + tableWidth, 0);
        }
    }
    m_numTokens = row;
    m_numSeqs = seqs;
    m_numSampled = sampled;

    BROOK_CUDA_CHECK(cudaMemcpyAsync(m_ids, ids, m_packedInts * sizeof(int32_t), cudaMemcpyHostToDevice, stream));
    BROOK_CUDA_CHECK(cudaMemcpy2DAsync(m_blockTables, size_t(m_maxBlocksPerSeq) * sizeof(int32_t), table,
                                       size_t(tableWidth) * sizeof(int32_t), size_t(tableWidth) * sizeof(int32_t),
                                       size_t(seqs), cudaMemcpyHostToDevice, stream));
}

}  // namespace brook::cuda
