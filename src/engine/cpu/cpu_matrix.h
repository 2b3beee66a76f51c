// CpuMatrix: one Linear's weight W [N out, K in] as the CPU kernels read it, in the checkpoint's
// own precision (no fp32 copy of a bf16 model; int8 stays int8).
//
// Layouts (N rounded up to a multiple of 16 with zero rows; "block" = 16 consecutive rows):
//   F32:  [N][K] row-major fp32, torch's Linear layout (OpenBLAS reads it directly).
//   BF16: [N/16][K/2][16][2] uint16 (K rounded up to even with zeros): for each block and each
//         pair of inputs (2p, 2p+1), 16 rows x 2 values = 64 bytes, one AVX-512 register. A
//         decode GEMV widens that register into two fp32 vectors (inputs 2p and 2p+1 of 16 rows)
//         and FMAs them with broadcast activations, so the 16 outputs of a block sit in the
//         16 lanes and no horizontal sum is needed; vdpbf16ps reads the same register as it is.
//   Q8:   [N/16][K/4][16][4] uint8 codes of asymmetric groups along K (QuantizedWeight's rule,
//         w = (q - zero) * scale), with per-block [G][16] fp32 scales and -scale*zero offsets,
//         G = K / groupSize. One 64-byte load is 16 rows x 4 consecutive inputs, the operand
//         vpdpbusd multiplies with 4 int8 activations broadcast to every lane: the 16 rows' dot
//         products sit in the 16 int32 lanes (cpu_gemm_q8.h). Groups are multiples of
//         kQ8Block (32) inputs, the activations' quantization block (q8Supported).
//   Q4:   4-bit codes (0..15) of the same groups, two to a byte: [N/16][K/8][16][4] bytes, byte
//         (k/8)*64 + lane*4 + k%4 holds input k in its low nibble when k/4 is even and in its high
//         nibble when odd. One 64-byte load thus expands (and 0x0F / shift-and) into the Q8
//         operands of two consecutive steps, and the int8 kernels run unchanged on them:
//         half the bytes streamed, the same arithmetic (cpu_gemm_q8.h).
// Immutable after construction; safe to read from any number of threads.
#pragma once

#include "engine/cpu/huge_page_allocator.h"
#include "engine/quantized_weight.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace brook::cpu {

enum class MatrixFormat { F32, BF16, Q8, Q4 };

const char* matrixFormatName(MatrixFormat format);

class CpuMatrix {
public:
    static constexpr int kBlockRows = 16;

    CpuMatrix() = default;
    // Row source: writes row n (K values) of the logical [N, K] matrix as raw uint16 bf16 bits.
    using Bf16RowSource = std::function<void(int n, uint16_t* row)>;
    static CpuMatrix fromBf16(int rows, int cols, const Bf16RowSource& rowSource);
    static CpuMatrix fromF32(int rows, int cols, std::vector<float> values);  // values: [N, K]
    // Inputs per activation quantization block of the int8 kernels; Q8 groups are multiples.
    static constexpr int kQ8Block = 32;
    // Whether fromQ8 takes w: 8 bits, groups a multiple of kQ8Block (Brook's 32, 64 and 128).
    static bool q8Supported(const QuantizedWeight& w);
    static CpuMatrix fromQ8(const QuantizedWeight& w);  // q8Supported(w) must hold
    // The same for 4 bits (groups a multiple of kQ8Block): fromQ4 keeps them as 4 bits.
    static bool q4Supported(const QuantizedWeight& w);
    static CpuMatrix fromQ4(const QuantizedWeight& w);  // q4Supported(w) must hold

    MatrixFormat format() const { return m_format; }
    int rows() const { return m_rows; }  // N
    int cols() const { return m_cols; }  // K
    int numBlocks() const { return (m_rows + kBlockRows - 1) / kBlockRows; }
    int pairs() const { return (m_cols + 1) / 2; }  // BF16: K/2 rounded up
    int groupSize() const { return m_groupSize; }   // Q8, Q4
    bool nibbles() const { return m_format == MatrixFormat::Q4; }
    int64_t bytes() const;

    // Raw storage for the kernels.
    const float* f32() const { return m_f32.data(); }
    const uint16_t* bf16Block(int block) const { return m_bf16.data() + size_t(block) * size_t(pairs()) * 32; }
    // Block b's codes. Q8: [K/4][16][4], the code of (row 16b + lane, input k) at
    // (k/4)*64 + lane*4 + k%4; Q4: half that, two codes a byte (see the layouts above).
    const uint8_t* q8Block(int block) const
    {
        return m_q8.data() + size_t(block) * size_t(m_cols) * kBlockRows / (nibbles() ? 2 : 1);
    }
    const float* q8Scales(int block) const { return m_scales.data() + size_t(block) * groups() * kBlockRows; }
    const float* q8Offsets(int block) const { return m_offsets.data() + size_t(block) * groups() * kBlockRows; }
    int groups() const { return m_groupSize ? m_cols / m_groupSize : 0; }

    // W[n][k] as fp32 (exact for F32 and BF16; the dequantized value for Q8).
    float at(int n, int k) const;
    // Row n as fp32 into dst[K] (embedding lookups).
    void rowToFloat(int n, float* dst) const;

    // The code of (row 16b + lane, input k) in block b's codes (q8Block(b)), Q8 or Q4.
    static uint8_t codeAt(const uint8_t* block, bool nibbles, int lane, int k)
    {
        if (!nibbles) return block[size_t(k / 4) * 64 + size_t(lane) * 4 + size_t(k % 4)];
        return uint8_t((block[size_t(k / 8) * 64 + size_t(lane) * 4 + size_t(k % 4)] >> (4 * ((k / 4) & 1))) & 0x0F);
    }

private:
    static CpuMatrix fromCodes(const QuantizedWeight& w, MatrixFormat format);

    MatrixFormat m_format = MatrixFormat::F32;
    int m_rows = 0, m_cols = 0, m_groupSize = 0;
    std::vector<float> m_f32;
    HugePageVector<uint16_t> m_bf16;
    HugePageVector<uint8_t> m_q8;
    HugePageVector<float> m_scales, m_offsets;
};

inline float bf16ToFloat(uint16_t bits)
{
    const uint32_t u = uint32_t(bits) << 16;
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}

// Round to nearest even, as vcvtne2ps2bf16 does (NaN stays NaN).
inline uint16_t floatToBf16(float f)
{
    uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
}

}  // namespace brook::cpu
