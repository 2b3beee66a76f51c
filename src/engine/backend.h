// Backend: the device side of the engine (nano-vllm's model_runner). It owns the weights, the
// KV-cache memory behind the BlockManager's block ids, and runs one batched forward step plus
// sampling. The CPU backend (cpu/) and the CUDA backend (src/cuda) implement it.
// Every method is engine-thread only unless it says otherwise.
#pragma once

#include "engine/backend_memory.h"
#include "engine/model_config.h"
#include "engine/sampler.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace brook {

// One sequence's share of a step. Tokens [startPosition, startPosition + tokens.size()) are
// computed; their K/V go into the cache at those positions through blockTable.
struct BatchSequence {
    std::span<const int32_t> tokens;      // [n] new tokens
    int startPosition = 0;                // tokens already cached for this sequence
    std::span<const int32_t> blockTable;  // covers startPosition + n positions
    bool sample = false;                  // produce the next token from the last position
    SamplingContext sampling;             // valid when sample
};

class Backend {
public:
    virtual ~Backend() = default;

    virtual std::string name() const = 0;           // "cpu", "cuda"; thread-safe
    virtual const ModelConfig& config() const = 0;  // thread-safe
    virtual int numKvBlocks() const = 0;            // thread-safe
    virtual int blockSize() const = 0;              // thread-safe
    virtual BackendMemory memory() const = 0;       // thread-safe
    // The KV cache's element type as vLLM's cache_config_info names it ("auto": the model's dtype).
    virtual std::string kvCacheDtype() const = 0;  // thread-safe

    // Starts the forward pass over `batch` where the device runs it asynchronously, so that the
    // engine can do host work that only sampling needs (structured-output masks) while it runs,
    // as vLLM computes its grammar bitmasks beside the forward. The next step() with the same
    // batch object (only its sampling contexts may have changed since) then finishes it. A
    // backend that computes on the calling thread does nothing here.
    virtual void prepareStep(std::span<const BatchSequence> batch) { (void)batch; }
    // Runs the forward pass over the batch and samples. Returns one result per sequence with
    // sample == true, in batch order.
    virtual std::vector<SampleResult> step(std::span<const BatchSequence> batch) = 0;
    // The same forward pass, returning fp32 logits [numSampled, V] instead of sampling
    // (reference checks and tests).
    virtual std::vector<float> logits(std::span<const BatchSequence> batch) = 0;
};

}  // namespace brook
