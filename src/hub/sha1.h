// Sha1: FIPS 180-4 SHA-1, incremental. Not for security: git names every object by the SHA-1 of
// "blob <size>\0" + content, and the hub lists that object id for files kept in git rather than
// LFS, so it is the only checksum we get for config.json, tokenizer files and the like.
// Not thread-safe; one instance per stream.
#pragma once

#include "hub/hash_blocks.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace brook {

class Sha1 {
public:
    Sha1();
    void update(const void* data, size_t size);
    void update(std::string_view data) { update(data.data(), data.size()); }
    // Finishes and returns the digest as 40 lowercase hex digits; the object is then spent.
    std::string hexDigest();

    static std::string hash(std::string_view data);
    // git's object id of a blob with this content (`git hash-object`).
    static std::string gitBlobId(std::string_view content);
    // The same for a whole file; nullopt when it cannot be read.
    static std::optional<std::string> gitBlobIdOfFile(const std::filesystem::path& path);

private:
    void compress(const uint8_t* block);

    std::array<uint32_t, 5> m_state;
    HashBlocks m_blocks;
};

}  // namespace brook
