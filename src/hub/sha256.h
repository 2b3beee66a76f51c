// Sha256: FIPS 180-4 SHA-256, incremental, so downloads are hashed as they stream to disk
// (the hub gives an LFS file's sha256 as its ETag). Our own ~100 lines rather than a libcrypto
// dependency. Not thread-safe; one instance per stream.
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

class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t size);
    void update(std::string_view data) { update(data.data(), data.size()); }
    // Finishes and returns the digest as 64 lowercase hex digits; the object is then spent.
    std::string hexDigest();

    static std::string hash(std::string_view data);
    // Hashes a whole file; nullopt when it cannot be read.
    static std::optional<std::string> hashFile(const std::filesystem::path& path);

private:
    void compress(const uint8_t* block);

    std::array<uint32_t, 8> m_state;
    HashBlocks m_blocks;
};

}  // namespace brook
