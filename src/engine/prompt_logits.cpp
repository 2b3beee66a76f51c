// computePromptLogits: see prompt_logits.h. Feeding one token per pass keeps to what every
// backend already does in decode (write this position's K/V, attend to the cache), so no
// backend needs a special path for it.
#include "engine/prompt_logits.h"

#include "engine/sequence.h"

#include <string>

namespace brook {

Result<std::vector<float>> computePromptLogits(Backend& backend, BlockManager& blocks, std::span<const int32_t> tokens)
{
    if (tokens.empty()) return makeError("prompt logits: no tokens");
    const size_t V = size_t(backend.config().vocabSize);
    Sequence seq;  // only its block table is used
    if (!blocks.allocate(seq, int(tokens.size())))
        return makeError("prompt logits: " + std::to_string(tokens.size()) +
                         " tokens need more KV cache than is free (" + std::to_string(blocks.numFreeBlocks()) +
                         " blocks of " + std::to_string(blocks.blockSize()) + " tokens)");
    std::vector<float> out;
    out.reserve(tokens.size() * V);
    try {
        for (size_t i = 0; i < tokens.size(); ++i) {
            BatchSequence step;
            step.tokens = tokens.subspan(i, 1);
            step.startPosition = int(i);
            step.blockTable = seq.blockTable;
            step.sample = true;
            const std::vector<float> row = backend.logits(std::span<const BatchSequence>(&step, 1));
            if (row.size() != V) {
                blocks.release(seq);
                return makeError("prompt logits: the backend returned " + std::to_string(row.size()) +
                                 " logits for a vocabulary of " + std::to_string(V));
            }
            out.insert(out.end(), row.begin(), row.end());
        }
    } catch (const std::exception& e) {
        blocks.release(seq);
        return makeError(std::string("prompt logits: the backend failed: ") + e.what());
    }
    blocks.release(seq);
    return out;
}

}  // namespace brook
