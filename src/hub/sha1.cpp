#include "hub/sha1.h"

#include <fstream>
#include <system_error>
#include <vector>

namespace brook {

namespace {

constexpr uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

}  // namespace

Sha1::Sha1() : m_state{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0} {}

void Sha1::compress(const uint8_t* block)
{
    uint32_t w[80];
    for (int i = 0; i < 16; ++i)
        w[i] = uint32_t(block[4 * i]) << 24 | uint32_t(block[4 * i + 1]) << 16 | uint32_t(block[4 * i + 2]) << 8 |
               uint32_t(block[4 * i + 3]);
    for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = m_state[0], b = m_state[1], c = m_state[2], d = m_state[3], e = m_state[4];
    for (int i = 0; i < 80; ++i) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdc;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6;
        }
        const uint32_t t = rotl(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rotl(b, 30);
        b = a;
        a = t;
    }
    m_state[0] += a;
    m_state[1] += b;
    m_state[2] += c;
    m_state[3] += d;
    m_state[4] += e;
}

void Sha1::update(const void* data, size_t size)
{
    m_blocks.update(data, size, [this](const uint8_t* block) { compress(block); });
}

std::string Sha1::hexDigest()
{
    m_blocks.finish([this](const uint8_t* block) { compress(block); });
    return HashBlocks::hex(m_state);
}

std::string Sha1::hash(std::string_view data)
{
    Sha1 sha;
    sha.update(data);
    return sha.hexDigest();
}

std::string Sha1::gitBlobId(std::string_view content)
{
    Sha1 sha;
    const std::string header = "blob " + std::to_string(content.size());
    sha.update(header.c_str(), header.size() + 1);  // with its terminating NUL, as git hashes it
    sha.update(content);
    return sha.hexDigest();
}

std::optional<std::string> Sha1::gitBlobIdOfFile(const std::filesystem::path& path)
{
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    Sha1 sha;
    const std::string header = "blob " + std::to_string(size);
    sha.update(header.c_str(), header.size() + 1);
    std::vector<char> buffer(1 << 20);
    uint64_t hashed = 0;
    while (in) {
        in.read(buffer.data(), std::streamsize(buffer.size()));
        sha.update(buffer.data(), size_t(in.gcount()));
        hashed += uint64_t(in.gcount());
    }
    if (in.bad() || hashed != size) return std::nullopt;  // changed while we read it
    return sha.hexDigest();
}

}  // namespace brook
