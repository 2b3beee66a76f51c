#include "engine/capacity_planner.h"

#include "engine/quantized_layer_loader.h"

#include <algorithm>
#include <cmath>

namespace brook {

namespace {

int64_t linearParametersPerLayer(const ModelConfig& c)
{
    const int64_t H = c.hiddenSize, I = c.intermediateSize;
    return H * c.qDim() + 2 * H * c.kvDim() + int64_t(c.qDim()) * H + 3 * H * I;  // q, k, v, o, gate, up, down
}

int64_t ceilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

// Quantization groups of 128 along K per layer: N * ceil(K / 128) for q, k, v, o, gate, up, down.
int64_t quantGroupsPerLayer(const ModelConfig& c)
{
    const int64_t H = c.hiddenSize, I = c.intermediateSize, Q = c.qDim(), KV = c.kvDim();
    const int64_t G = 128;
    return (Q + 2 * KV) * ceilDiv(H, G) + H * ceilDiv(Q, G) + 2 * I * ceilDiv(H, G) + H * ceilDiv(I, G);
}

// The smallest utilization, in steps of 0.01, that leaves `needed` bytes of the device; 0 if none.
double utilizationFor(int64_t needed, int64_t total)
{
    if (total <= 0) return 0;
    const double u = std::ceil(double(needed) / double(total) * 100.0 - 1e-9) / 100.0;
    return u <= 1.0 ? std::max(u, 0.01) : 0.0;
}

}  // namespace

int64_t CapacityPlanner::parameterCount(const ModelConfig& c)
{
    const int64_t H = c.hiddenSize, V = c.vocabSize;
    const int64_t perLayer = linearParametersPerLayer(c) + 2 * H;  // + the two RMSNorm weights
    int64_t params = V * H + c.numLayers * perLayer + H;           // embeddings, layers, final norm
    if (!c.tieWordEmbeddings) params += V * H;
    return params;
}

int64_t CapacityPlanner::weightBytes(const ModelConfig& c, int elementBytes, const std::string& quantization)
{
    const int64_t params = parameterCount(c);
    if (quantization.empty()) return params * elementBytes;
    const int64_t linear = linearParametersPerLayer(c) * c.numLayers;
    const int64_t rest = (params - linear) * elementBytes;  // embeddings, norms, an untied head
    // Groups of 128 along K (quantized_weight.h): a 2-byte fp16 scale and a 1-byte zero each.
    const int64_t groupBytes = quantGroupsPerLayer(c) * c.numLayers * 3;
    if (quantization == "int8") return rest + linear + groupBytes;  // one byte a weight
    return rest + ceilDiv(linear, 2) + groupBytes;                  // int4 / awq: two nibbles a byte
}

int64_t CapacityPlanner::activationBytes(const ModelConfig& c, int maxNumBatchedTokens, int maxNumSeqs, int e)
{
    const int64_t T = std::max(maxNumBatchedTokens, maxNumSeqs), S = maxNumSeqs;
    const int64_t H = c.hiddenSize, I = c.intermediateSize, V = c.vocabSize;
    const int64_t perToken = H * 4                                      // fp32 residual stream
                             + H * e                                    // normed
                             + (int64_t(c.qDim()) + 2 * c.kvDim()) * e  // qkv
                             + 2 * int64_t(c.qDim()) * e                // rotated q, attention output
                             + 2 * I * e + I * e;                       // gate|up, SiLU(gate)*up
    const int64_t perSampledRow = H * e + V * 4 + V * 4;                // final norm, fp32 logits, sampler scratch
    return T * perToken + S * perSampledRow;
}

int64_t CapacityPlanner::cpuKvCacheBytes(const ModelConfig& model, const ServingSettings& s, int maxModelLen)
{
    const int64_t wanted = model.kvBytesPerToken(sizeof(float)) * int64_t(maxModelLen) * std::max(1, s.maxNumSeqs);
    return std::min(s.cpuKvCacheBytes, wanted);
}

int64_t CapacityPlanner::cudaKvCacheBytes(int64_t deviceTotalBytes, double gpuMemoryUtilization, bool enforceEager,
                                          int64_t measuredUsedBytes)
{
    return int64_t(double(deviceTotalBytes) * gpuMemoryUtilization) - measuredUsedBytes -
           cudaGraphReserveBytes(enforceEager);
}

int64_t CapacityPlanner::cpuWeightBytes(const ModelConfig& c, const std::string& quantization)
{
    // The CPU backend keeps a bf16 checkpoint in bf16 and makes fp16 and fp32 ones fp32
    // (cpu_model_weights.h). With int8 the Linears and the embedding / lm head are 8-bit, with an
    // fp32 scale and offset per group of 128 along K (cpu_matrix.h); with int4 the Linears are
    // 4-bit (two codes a byte) and the embedding / head int8; only the norms keep the
    // checkpoint's dtype.
    const int element = c.torchDtype == "bfloat16" ? 2 : 4;
    if (quantization.empty()) return weightBytes(c, element, quantization);
    if (quantization == "int8" || quantization == "int4") {
        const int64_t embeddings = int64_t(c.vocabSize) * c.hiddenSize * (c.tieWordEmbeddings ? 1 : 2);
        const int64_t linears = linearParametersPerLayer(c) * c.numLayers;
        const int64_t quantized = linears + embeddings;
        const int64_t codes = quantization == "int8" ? quantized : linears / 2 + embeddings;
        return codes + ceilDiv(quantized, 128) * 8 + (parameterCount(c) - quantized) * element;
    }
    return weightBytes(c, element, {}) + linearParametersPerLayer(c) * c.numLayers * (4 - element);
}

CapacityPlan CapacityPlanner::plan(const CapacityInput& in)
{
    CapacityPlan p;
    const ModelConfig& c = in.model;
    const bool cpu = in.device == "cpu";
    p.maxModelLen = in.maxModelLen > 0 ? in.maxModelLen : c.maxPositionEmbeddings;
    p.elementBytes = cpu || in.dtype == "float32" ? 4 : 2;  // the CPU backend computes in fp32
    p.parameters = parameterCount(c);
    const int blockSize = std::max(1, in.blockSize);
    p.kvBytesPerToken = c.kvBytesPerToken(p.elementBytes);
    p.kvBytesPerBlock = p.kvBytesPerToken * blockSize;
    p.blocksPerSequence = int(ceilDiv(std::max(1, p.maxModelLen), blockSize));
    const int64_t oneSequence = p.kvBytesPerBlock * p.blocksPerSequence;
    p.activationBytes = activationBytes(c, in.maxNumBatchedTokens, std::max(1, in.maxNumSeqs), p.elementBytes);

    int64_t kvRaw = 0;
    if (cpu) {
        p.weightsBytes = cpuWeightBytes(c, in.quantization);
        p.budgetBytes = in.cpuKvCacheBytes;
        kvRaw = cpuKvCacheBytes(c, in, p.maxModelLen);
    } else {
        p.weightsBytes = weightBytes(c, p.elementBytes, in.quantization);
        p.activationBytes += kCudaRuntimeBytes;
        p.graphBytes = cudaGraphReserveBytes(in.enforceEager);
        p.budgetBytes = int64_t(double(in.deviceTotalBytes) * in.gpuMemoryUtilization);
        kvRaw = cudaKvCacheBytes(in.deviceTotalBytes, in.gpuMemoryUtilization, in.enforceEager,
                                 p.weightsBytes + p.activationBytes);
    }
    p.kvBlocks = kvRaw > 0 ? kvRaw / p.kvBytesPerBlock : 0;
    p.kvCacheBytes = p.kvBlocks * p.kvBytesPerBlock;
    p.kvTokens = p.kvBlocks * blockSize;
    p.maxConcurrency = double(p.kvTokens) / double(std::max(1, p.maxModelLen));
    p.fullLengthSequences = int(std::min<int64_t>(p.kvBlocks / p.blocksPerSequence, 1 << 30));
    p.concurrentSequences = std::min({p.fullLengthSequences, in.maxNumSeqs, in.maxNumBatchedTokens});
    if (p.fullLengthSequences < std::min(in.maxNumSeqs, in.maxNumBatchedTokens)) p.binding = CapacityLimit::KvCache;
    else if (in.maxNumBatchedTokens < in.maxNumSeqs) p.binding = CapacityLimit::MaxNumBatchedTokens;
    else p.binding = CapacityLimit::MaxNumSeqs;

    // Problems, the first that stops a load wins; each with the change that would fix it.
    const int64_t fixed = p.weightsBytes + p.activationBytes + p.graphBytes;
    const int fittingLen = int(std::min<int64_t>(p.kvTokens, c.maxPositionEmbeddings));
    // The load's own check (group size against the model's dimensions, AWQ or not), so the plan
    // refuses what the load would.
    if (auto quantization = resolveQuantization(c, in.quantization); !quantization) {
        p.problem = CapacityProblem::QuantizationDoesNotApply;
        p.quantizationError = quantization.error();
    } else if (p.maxModelLen > c.maxPositionEmbeddings) {
        p.problem = CapacityProblem::ModelLenTooLong;
        p.suggestedMaxModelLen = c.maxPositionEmbeddings;
    } else if (cpu) {
        if (p.kvBlocks < p.blocksPerSequence) {
            p.problem = CapacityProblem::KvCacheTooSmall;
            p.suggestedMaxModelLen = fittingLen;
            p.suggestedCpuKvCacheBytes = oneSequence;
        }
    } else if (in.deviceTotalBytes <= 0) {
        p.problem = CapacityProblem::NoDeviceMemory;
    } else if (fixed >= p.budgetBytes || p.kvBlocks < p.blocksPerSequence) {
        p.problem = fixed >= p.budgetBytes ? CapacityProblem::WeightsDoNotFit : CapacityProblem::KvCacheTooSmall;
        p.suggestedGpuMemoryUtilization = utilizationFor(fixed + oneSequence, in.deviceTotalBytes);
        p.suggestedMaxModelLen = fittingLen;
    }
    return p;
}

}  // namespace brook
