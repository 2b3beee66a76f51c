// HashBlocks: the message framing SHA-1 and SHA-256 share (FIPS 180-4, 5.1.1 and 6.x.2): bytes are
// gathered into 64-byte blocks for the hash's compression function, and the digest pads with
// 0x80, zeros and the message length in bits, big-endian, to a block boundary. Each hash keeps its
// own state and compression; this keeps the buffering. Not thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace brook {

class HashBlocks {
public:
    // Feeds bytes; `compress(const uint8_t* block)` runs for every full 64-byte block.
    template <typename Compress>
    void update(const void* data, size_t size, Compress&& compress)
    {
        const auto* bytes = static_cast<const uint8_t*>(data);
        m_totalBytes += size;
        if (m_buffered > 0) {
            const size_t take = std::min(size, kBlock - m_buffered);
            std::memcpy(m_buffer.data() + m_buffered, bytes, take);
            m_buffered += take;
            bytes += take;
            size -= take;
            if (m_buffered < kBlock) return;
            compress(m_buffer.data());
            m_buffered = 0;
        }
        for (; size >= kBlock; bytes += kBlock, size -= kBlock) compress(bytes);
        std::memcpy(m_buffer.data(), bytes, size);
        m_buffered = size;
    }

    // The closing padding and length; afterwards every byte has been compressed.
    template <typename Compress>
    void finish(Compress&& compress)
    {
        const uint64_t bits = m_totalBytes * 8;
        const uint8_t pad = 0x80, zero = 0;
        update(&pad, 1, compress);
        while (m_buffered != kBlock - 8) update(&zero, 1, compress);
        uint8_t length[8];
        for (int i = 0; i < 8; ++i) length[i] = uint8_t(bits >> (56 - 8 * i));
        update(length, 8, compress);
    }

    // The state words as lowercase hex, most significant nibble first.
    template <size_t N>
    static std::string hex(const std::array<uint32_t, N>& state)
    {
        static const char* kHex = "0123456789abcdef";
        std::string out;
        out.reserve(N * 8);
        for (uint32_t word : state)
            for (int shift = 28; shift >= 0; shift -= 4) out.push_back(kHex[(word >> shift) & 0xf]);
        return out;
    }

private:
    static constexpr size_t kBlock = 64;
    std::array<uint8_t, kBlock> m_buffer{};
    size_t m_buffered = 0;
    uint64_t m_totalBytes = 0;
};

}  // namespace brook
