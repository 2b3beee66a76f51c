#include "engine/block_hash.h"

namespace brook {

namespace {
// splitmix64's finalizer: every input bit reaches every output bit, so neighbouring token ids
// and reordered tokens land far apart.
uint64_t mix(uint64_t x)
{
    x += 0x9e37'79b9'7f4a'7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58'476d'1ce4'e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d0'49bb'1331'11ebULL;
    return x ^ (x >> 31);
}
}  // namespace

uint64_t hashBlockTokens(uint64_t parentHash, std::span<const int32_t> tokens, std::span<const uint64_t> extraKeys)
{
    uint64_t h = mix(parentHash);
    for (int32_t token : tokens) h = mix(h ^ uint64_t(uint32_t(token)));
    // The lengths go in too, so tokens and extra keys cannot trade places.
    h = mix(h ^ (uint64_t(tokens.size()) << 32 | uint64_t(extraKeys.size())));
    for (uint64_t key : extraKeys) h = mix(h ^ key);
    return h;
}

}  // namespace brook
