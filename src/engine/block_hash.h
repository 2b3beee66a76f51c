// Block hashes for prefix caching (vLLM V1's hash_block_tokens): a full KV block is named by a
// hash chained over its parent block's hash, its token ids and any extra keys, so a block's
// name stands for the whole prefix up to and including it and one block has one identity.
// 64 bits are enough to find candidates; the block manager also compares the stored tokens and
// parent hash before it reuses a block, so a collision costs a miss, never a wrong answer.
#pragma once

#include <cstdint>
#include <span>

namespace brook {

// The parent hash of a sequence's first block.
inline constexpr uint64_t kRootBlockHash = 0x6272'6f6f'6b5f'6b76ULL;  // "brook_kv"

uint64_t hashBlockTokens(uint64_t parentHash, std::span<const int32_t> tokens,
                         std::span<const uint64_t> extraKeys = {});

}  // namespace brook
