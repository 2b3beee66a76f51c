// TensorView: a read-only view of one tensor inside a memory-mapped checkpoint file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace brook {

enum class DType { F32, F16, BF16, I32, I8, U8, I64, F64, Unknown };

size_t dtypeSize(DType dtype);
const char* dtypeName(DType dtype);  // safetensors spelling: "F32", "BF16", ...

struct TensorView {
    std::string name;
    std::string file;  // the file it lives in, for error messages
    DType dtype = DType::Unknown;
    std::vector<int64_t> shape;
    const std::byte* data = nullptr;
    size_t numBytes = 0;

    int64_t numElements() const
    {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
    }
};

// Converts any float dtype to fp32 (bf16 and fp16 widened exactly). `out` has numElements().
void convertToFloat32(const TensorView& tensor, float* out);

// "[2048, 1024]", for error messages.
std::string shapeToString(const std::vector<int64_t>& shape);

// True for F32, F16 and BF16: the dtypes weights may have.
bool isFloatDType(DType dtype);
// The DType for a safetensors spelling ("BF16"), or Unknown.
DType dtypeFromName(const std::string& name);

// Element conversions between fp32 and the 16-bit formats. Narrowing rounds to nearest even,
// overflows to inf and keeps nan a nan; widening is exact (subnormals, inf and nan included).
float bf16ToFloat(uint16_t bits);
float fp16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);
uint16_t floatToFp16(float value);
// Converts `count` fp32 values to `dtype` (F32, F16 or BF16) at `out` (count x dtypeSize bytes).
void convertFromFloat32(const float* in, size_t count, DType dtype, std::byte* out);

}  // namespace brook
