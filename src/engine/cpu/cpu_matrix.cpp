#include "engine/cpu/cpu_matrix.h"

#include <cassert>

namespace brook::cpu {

const char* matrixFormatName(MatrixFormat format)
{
    switch (format) {
    case MatrixFormat::F32: return "fp32";
    case MatrixFormat::BF16: return "bf16";
    case MatrixFormat::Q8: return "int8";
    case MatrixFormat::Q4: return "int4";
    }
    return "unknown";
}

CpuMatrix CpuMatrix::fromBf16(int rows, int cols, const Bf16RowSource& rowSource)
{
    CpuMatrix m;
    m.m_format = MatrixFormat::BF16;
    m.m_rows = rows;
    m.m_cols = cols;
    const int P = m.pairs();
    m.m_bf16.assign(size_t(m.numBlocks()) * size_t(P) * 32, 0);
    std::vector<uint16_t> row(size_t(P) * 2, 0);
    for (int n = 0; n < rows; ++n) {
        rowSource(n, row.data());
        uint16_t* block = m.m_bf16.data() + size_t(n / kBlockRows) * size_t(P) * 32;
        const int lane = n % kBlockRows;
        for (int p = 0; p < P; ++p) {
            block[size_t(p) * 32 + lane * 2] = row[size_t(2 * p)];
            block[size_t(p) * 32 + lane * 2 + 1] = row[size_t(2 * p + 1)];  // the padding 0 when K is odd
        }
    }
    return m;
}

CpuMatrix CpuMatrix::fromF32(int rows, int cols, std::vector<float> values)
{
    assert(values.size() == size_t(rows) * size_t(cols));
    CpuMatrix m;
    m.m_format = MatrixFormat::F32;
    m.m_rows = rows;
    m.m_cols = cols;
    m.m_f32 = std::move(values);
    return m;
}

bool CpuMatrix::q8Supported(const QuantizedWeight& w)
{
    return w.bits == 8 && w.groupSize % kQ8Block == 0 && w.cols % w.groupSize == 0;
}

bool CpuMatrix::q4Supported(const QuantizedWeight& w)
{
    return w.bits == 4 && w.groupSize % kQ8Block == 0 && w.cols % w.groupSize == 0;
}

CpuMatrix CpuMatrix::fromQ4(const QuantizedWeight& w)
{
    assert(q4Supported(w));
    return fromCodes(w, MatrixFormat::Q4);
}

CpuMatrix CpuMatrix::fromQ8(const QuantizedWeight& w)
{
    assert(q8Supported(w));
    return fromCodes(w, MatrixFormat::Q8);
}

CpuMatrix CpuMatrix::fromCodes(const QuantizedWeight& w, MatrixFormat format)
{
    CpuMatrix m;
    m.m_format = format;
    m.m_rows = w.rows;
    m.m_cols = w.cols;
    m.m_groupSize = w.groupSize;
    const int G = w.groupsPerRow(), B = m.numBlocks();
    m.m_q8.assign(size_t(B) * size_t(w.cols) * kBlockRows / (m.nibbles() ? 2 : 1), 0);
    m.m_scales.assign(size_t(B) * size_t(G) * kBlockRows, 0.0f);
    m.m_offsets.assign(size_t(B) * size_t(G) * kBlockRows, 0.0f);
    for (int n = 0; n < w.rows; ++n) {
        const int b = n / kBlockRows, lane = n % kBlockRows;
        uint8_t* dst = const_cast<uint8_t*>(m.q8Block(b)) + size_t(lane) * 4;
        if (m.nibbles())
            for (int k = 0; k < w.cols; ++k)
                dst[size_t(k / 8) * 64 + size_t(k % 4)] |= uint8_t(w.code(n, k) << (4 * ((k / 4) & 1)));
        else
            for (int k = 0; k < w.cols; ++k) dst[size_t(k / 4) * 64 + size_t(k % 4)] = w.code(n, k);
        for (int g = 0; g < G; ++g) {
            const float scale = w.scales[size_t(n) * G + g];
            const size_t at = (size_t(b) * G + g) * kBlockRows + lane;
            m.m_scales[at] = scale;
            // sum_k x_k (q_k - z) s = s * sum_k x_k q_k + (-s z) * sum_k x_k
            m.m_offsets[at] = -scale * float(w.zeros[size_t(n) * G + g]);
        }
    }
    return m;
}

int64_t CpuMatrix::bytes() const
{
    return int64_t(m_f32.size() * sizeof(float) + m_bf16.size() * sizeof(uint16_t) + m_q8.size() +
                   (m_scales.size() + m_offsets.size()) * sizeof(float));
}

float CpuMatrix::at(int n, int k) const
{
    const int b = n / kBlockRows, lane = n % kBlockRows;
    switch (m_format) {
    case MatrixFormat::F32: return m_f32[size_t(n) * m_cols + k];
    case MatrixFormat::BF16: return bf16ToFloat(bf16Block(b)[size_t(k / 2) * 32 + lane * 2 + (k & 1)]);
    case MatrixFormat::Q8:
    case MatrixFormat::Q4: {
        const int g = k / m_groupSize;
        const float code = float(codeAt(q8Block(b), nibbles(), lane, k));
        return code * q8Scales(b)[g * kBlockRows + lane] + q8Offsets(b)[g * kBlockRows + lane];
    }
    }
    return 0.0f;
}

void CpuMatrix::rowToFloat(int n, float* dst) const
{
    for (int k = 0; k < m_cols; ++k) dst[k] = at(n, k);
}

}  // namespace brook::cpu
