// Dtype names and sizes, and the conversions between fp32 and bf16 / fp16.
// convertToFloat32 widens a whole checkpoint (360M values for ERNIE 0.3B) at load, so its loops
// are branch-free on purpose: element reads go through memcpy (tensor data in a mapped file need
// not be aligned) and the special cases are bit masks, so GCC and Clang vectorize them.
#include "engine/tensor_view.h"

#include <bit>
#include <cstring>

namespace brook {

size_t dtypeSize(DType dtype)
{
    switch (dtype) {
    case DType::F32: return 4;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::I32: return 4;
    case DType::I8: return 1;
    case DType::U8: return 1;
    case DType::I64: return 8;
    case DType::F64: return 8;
    case DType::Unknown: return 0;
    }
    return 0;
}

const char* dtypeName(DType dtype)
{
    switch (dtype) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I32: return "I32";
    case DType::I8: return "I8";
    case DType::U8: return "U8";
    case DType::I64: return "I64";
    case DType::F64: return "F64";
    case DType::Unknown: return "unknown";
    }
    return "unknown";
}

DType dtypeFromName(const std::string& name)
{
    for (DType d : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I8, DType::U8, DType::I64, DType::F64}) {
        if (name == dtypeName(d)) return d;
    }
    return DType::Unknown;
}

std::string shapeToString(const std::vector<int64_t>& shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

bool isFloatDType(DType dtype) { return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16; }

float bf16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t(bits) << 16); }

float fp16ToFloat(uint16_t bits)
{
    // Shifting exponent and mantissa into fp32 position and multiplying by 2^112 rebiases the
    // exponent (15 -> 127); for subnormal halves the product is exact as well, because the
    // shifted bits form an fp32 subnormal of the same significand. Inf and nan (exponent 31)
    // instead get an all-ones fp32 exponent, keeping the payload (so the quiet bit too).
    const uint32_t h = bits;
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t magnitude = h & 0x7fffu;
    const float scaled = std::bit_cast<float>(magnitude << 13) * 0x1p112f;
    const uint32_t finiteBits = std::bit_cast<uint32_t>(scaled);
    const uint32_t specialBits = 0x7f800000u | ((magnitude & 0x3ffu) << 13);
    const uint32_t special = 0u - uint32_t(magnitude >= 0x7c00u);  // all ones for inf / nan
    return std::bit_cast<float>(sign | (specialBits & special) | (finiteBits & ~special));
}

uint16_t floatToBf16(float value)
{
    const uint32_t u = std::bit_cast<uint32_t>(value);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return uint16_t((u >> 16) | 0x0040u);  // nan stays nan (quiet), whatever its payload
    }
    const uint32_t roundingBias = 0x7fffu + ((u >> 16) & 1u);  // ties to even
    return uint16_t((u + roundingBias) >> 16);
}

uint16_t floatToFp16(float value)
{
    // After F. Giesen's float_to_half_fast3_rtne (public domain).
    uint32_t u = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    uint16_t out;
    if (u >= 0x47800000u) {  // >= 65536 (or inf / nan): inf, nan stays nan
        out = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
    } else if (u < 0x38800000u) {  // below 2^-14: the result is subnormal or zero
        // Adding 0.5 aligns the 10 mantissa bits at the bottom; the fp32 add rounds to even.
        const float aligned = std::bit_cast<float>(u) + 0.5f;
        out = uint16_t(std::bit_cast<uint32_t>(aligned) - 0x3f000000u);
    } else {
        const uint32_t mantissaOdd = (u >> 13) & 1u;
        u += (uint32_t(15 - 127) << 23) + 0xfffu + mantissaOdd;  // rebias, round to even
        out = uint16_t(u >> 13);                                 // a carry out of 65504 lands on inf, as it should
    }
    return uint16_t(out | sign);
}

namespace {

template <typename T>
inline T loadUnaligned(const std::byte* p)
{
    T value;
    std::memcpy(&value, p, sizeof(T));
    return value;
}

template <typename T>
void castToFloat(const std::byte* in, size_t n, float* out)
{
    for (size_t i = 0; i < n; ++i) out[i] = float(loadUnaligned<T>(in + i * sizeof(T)));
}

}  // namespace

void convertToFloat32(const TensorView& tensor, float* out)
{
    const size_t n = size_t(tensor.numElements());
    // An empty tensor's buffer may be null (an empty std::vector's data()); memcpy on null is UB.
    if (n == 0) return;
    const std::byte* in = tensor.data;
    switch (tensor.dtype) {
    case DType::F32: std::memcpy(out, in, n * sizeof(float)); return;
    case DType::BF16:
        for (size_t i = 0; i < n; ++i) out[i] = bf16ToFloat(loadUnaligned<uint16_t>(in + 2 * i));
        return;
    case DType::F16:
        for (size_t i = 0; i < n; ++i) out[i] = fp16ToFloat(loadUnaligned<uint16_t>(in + 2 * i));
        return;
    case DType::F64: castToFloat<double>(in, n, out); return;
    case DType::I32: castToFloat<int32_t>(in, n, out); return;
    case DType::I64: castToFloat<int64_t>(in, n, out); return;
    case DType::I8: castToFloat<int8_t>(in, n, out); return;
    case DType::U8: castToFloat<uint8_t>(in, n, out); return;
    case DType::Unknown: break;
    }
    std::memset(out, 0, n * sizeof(float));  // callers validate dtypes; never read garbage
}

void convertFromFloat32(const float* in, size_t count, DType dtype, std::byte* out)
{
    switch (dtype) {
    case DType::F32: std::memcpy(out, in, count * sizeof(float)); return;
    case DType::BF16:
        for (size_t i = 0; i < count; ++i) {
            const uint16_t h = floatToBf16(in[i]);
            std::memcpy(out + 2 * i, &h, 2);
        }
        return;
    case DType::F16:
        for (size_t i = 0; i < count; ++i) {
            const uint16_t h = floatToFp16(in[i]);
            std::memcpy(out + 2 * i, &h, 2);
        }
        return;
    default: std::memset(out, 0, count * dtypeSize(dtype)); return;
    }
}

}  // namespace brook
