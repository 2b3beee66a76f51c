// QuantizedWeight: packing, round-to-nearest quantization and dequantization (layout in the
// header). RTN rounds each group's scale to fp16 before choosing codes, so the codes are the
// best ones for the scale a GPU actually multiplies by, and CPU and GPU dequantize identically.
#include "engine/quantized_weight.h"

#include "engine/tensor_view.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace brook {

namespace {

// The smallest positive normal fp16 (2^-14): the scale of a constant group. Any positive scale
// would do for the code arithmetic; a normal one keeps the GPU's fp16 path free of subnormals.
constexpr float kMinScale = 0x1p-14f;

// The smallest fp16 value >= scale, kept positive and finite. Rounding up rather than to nearest
// keeps maxCode * scale >= max - min, so no weight of the group is clamped and every weight is
// within scale / 2 of its dequantized value.
float roundScaleToFp16(float scale)
{
    if (!(scale > 0.0f)) return kMinScale;  // a constant group: any positive scale is exact
    uint16_t h = floatToFp16(scale);
    if (fp16ToFloat(h) < scale && h < 0x7bffu) ++h;  // next fp16 up (positive: the next bit pattern)
    return std::min(fp16ToFloat(h), 65504.0f);       // largest finite fp16
}

void setCode(QuantizedWeight& w, int n, int k, uint8_t q)
{
    uint8_t* row = w.packed.data() + size_t(n) * size_t(w.packedRowBytes());
    if (w.bits == 8) {
        row[k] = q;
        return;
    }
    uint8_t& byte = row[k / 2];
    if (k % 2 == 0) byte = uint8_t((byte & 0xF0u) | (q & 0x0Fu));
    else byte = uint8_t((byte & 0x0Fu) | uint8_t(q << 4));
}

}  // namespace

uint8_t QuantizedWeight::code(int n, int k) const
{
    const uint8_t* row = packed.data() + size_t(n) * size_t(packedRowBytes());
    if (bits == 8) return row[k];
    const uint8_t byte = row[k / 2];
    return k % 2 == 0 ? uint8_t(byte & 0x0Fu) : uint8_t(byte >> 4);
}

float QuantizedWeight::value(int n, int k) const
{
    const size_t g = size_t(n) * size_t(groupsPerRow()) + size_t(k / groupSize);
    return (float(code(n, k)) - float(zeros[g])) * scales[g];
}

QuantizedWeight QuantizedWeight::zeroed(int bits, int groupSize, int rows, int cols)
{
    QuantizedWeight q;
    q.bits = bits;
    q.groupSize = groupSize;
    q.rows = rows;
    q.cols = cols;
    q.packed.assign(size_t(rows) * size_t(q.packedRowBytes()), 0);
    q.scales.assign(size_t(rows) * size_t(q.groupsPerRow()), 0.0f);
    q.zeros.assign(q.scales.size(), 0);
    return q;
}

int64_t QuantizedWeight::deviceBytes() const
{
    const int64_t groups = int64_t(rows) * groupsPerRow();
    return int64_t(rows) * packedRowBytes() + groups * 2 + groups;
}

Result<QuantizedWeight> quantizeRtn(std::span<const float> w, int rows, int cols, int bits, int groupSize)
{
    if (bits != 4 && bits != 8) return makeError("quantization: bits must be 4 or 8, got " + std::to_string(bits));
    if (rows <= 0 || cols <= 0)
        return makeError("quantization: weight shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                         "] must be positive");
    if (cols % 2 != 0) return makeError("quantization: K = " + std::to_string(cols) + " must be even");
    if (groupSize <= 0 || cols % groupSize != 0)
        return makeError("quantization: group size " + std::to_string(groupSize) +
                         " does not divide K = " + std::to_string(cols));
    if (w.size() != size_t(rows) * size_t(cols))
        return makeError("quantization: " + std::to_string(w.size()) + " values for a [" + std::to_string(rows) + ", " +
                         std::to_string(cols) + "] weight");

    QuantizedWeight q = QuantizedWeight::zeroed(bits, groupSize, rows, cols);
    const int maxCode = (1 << bits) - 1;

    for (int n = 0; n < rows; ++n) {
        const float* row = w.data() + size_t(n) * size_t(cols);
        for (int g = 0; g < q.groupsPerRow(); ++g) {
            const float* group = row + size_t(g) * size_t(groupSize);
            // The range always includes 0, so zero is representable and the zero point in range.
            float lo = 0.0f, hi = 0.0f;
            for (int i = 0; i < groupSize; ++i) {
                if (!std::isfinite(group[i]))
                    return makeError("quantization: weight [" + std::to_string(n) + ", " +
                                     std::to_string(g * groupSize + i) + "] is not finite");
                lo = std::min(lo, group[i]);
                hi = std::max(hi, group[i]);
            }
            const float scale = roundScaleToFp16((hi - lo) / float(maxCode));
            const int zero = std::clamp(int(std::lround(-lo / scale)), 0, maxCode);
            const size_t gi = size_t(n) * size_t(q.groupsPerRow()) + size_t(g);
            q.scales[gi] = scale;
            q.zeros[gi] = uint8_t(zero);
            for (int i = 0; i < groupSize; ++i) {
                const int code = std::clamp(int(std::lround(group[i] / scale)) + zero, 0, maxCode);
                setCode(q, n, g * groupSize + i, uint8_t(code));
            }
        }
    }
    return q;
}

void dequantize(const QuantizedWeight& w, std::span<float> out)
{
    for (int n = 0; n < w.rows; ++n) {
        float* dst = out.data() + size_t(n) * size_t(w.cols);
        for (int g = 0; g < w.groupsPerRow(); ++g) {
            const size_t gi = size_t(n) * size_t(w.groupsPerRow()) + size_t(g);
            const float scale = w.scales[gi];
            const float zero = float(w.zeros[gi]);
            for (int k = g * w.groupSize; k < (g + 1) * w.groupSize; ++k) dst[k] = (float(w.code(n, k)) - zero) * scale;
        }
    }
}

Result<QuantizedWeight> concatRows(std::span<const QuantizedWeight> parts)
{
    if (parts.empty()) return makeError("quantization: nothing to concatenate");
    QuantizedWeight out;
    out.bits = parts[0].bits;
    out.groupSize = parts[0].groupSize;
    out.cols = parts[0].cols;
    for (const QuantizedWeight& p : parts) {
        if (p.bits != out.bits || p.groupSize != out.groupSize || p.cols != out.cols)
            return makeError("quantization: cannot concatenate a " + std::to_string(p.bits) + "-bit [" +
                             std::to_string(p.rows) + ", " + std::to_string(p.cols) + "] group " +
                             std::to_string(p.groupSize) + " weight with a " + std::to_string(out.bits) + "-bit [*, " +
                             std::to_string(out.cols) + "] group " + std::to_string(out.groupSize) + " one");
        out.rows += p.rows;
    }
    out.packed.reserve(size_t(out.rows) * size_t(out.packedRowBytes()));
    out.scales.reserve(size_t(out.rows) * size_t(out.groupsPerRow()));
    out.zeros.reserve(out.scales.capacity());
    for (const QuantizedWeight& p : parts) {
        out.packed.insert(out.packed.end(), p.packed.begin(), p.packed.end());
        out.scales.insert(out.scales.end(), p.scales.begin(), p.scales.end());
        out.zeros.insert(out.zeros.end(), p.zeros.begin(), p.zeros.end());
    }
    return out;
}

}  // namespace brook
