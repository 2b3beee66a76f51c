// W4A16 / W8A16 matrix products: out[M, N] (+)= f(x)[M, K] @ dequant(w)[N, K]^T with x in the
// element type (bf16/fp16), w in Brook's quantized layout (engine/quantized_weight.h: rows
// along K, asymmetric groups along K, fp16 scales, byte zero points), fp32 accumulation.
// Weights are dequantized in registers; nothing bf16-sized is ever written for them.
//   gemv (M <= kQuantGemvMaxRows, decode): a weight stream like the skinny GEMM, with its
//     prologues (RmsNorm / SiluMul, see skinny_gemm.h) so the decode path keeps its fusions.
//   gemm (any M, prefill): tensor-core tiles; the weight tile is dequantized into shared
//     memory as the element type and multiplied with mma (fp32 accumulators).
// Reference: dequantize() + cpu::linear. Test: tests/cuda/test_quant_matmul.cpp.
#pragma once

#include "cuda/cuda_dtype.h"
#include "cuda/device_buffer.h"
#include "cuda/skinny_gemm.h"

#include <cuda_runtime.h>

#include <cstdint>

// Declared, not included: engine/quantized_weight.h is C++20 (std::span) and the .cu files that
// include this header compile as C++17 (cmake/BrookDependencies.cmake). Include it where the
// fields are used.
namespace brook {
struct QuantizedWeight;
}

namespace brook::cuda {

inline constexpr int kQuantGemvMaxRows = 8;

// A quantized weight on the device (views into memory someone else owns).
struct QuantDeviceWeight {
    const uint8_t* packed = nullptr;  // [N][K * bits / 8], as QuantizedWeight::packed
    const __half* scales = nullptr;   // [N][K / groupSize]
    const uint8_t* zeros = nullptr;   // [N][K / groupSize]
    int bits = 4;
    int groupSize = 128;
    int rows = 0;  // N
    int cols = 0;  // K
};

// Bytes upload_quantized_weight writes (each part 256-byte aligned).
size_t quantized_weight_device_bytes(const QuantizedWeight& w);
// Copies w into device memory at `dst` (at least quantized_weight_device_bytes(w) bytes,
// 256-byte aligned) and returns the view. Synchronous.
QuantDeviceWeight upload_quantized_weight(const QuantizedWeight& w, void* dst);

// True when the shape and layout suit the kernels (bits 4|8, groupSize % 32 == 0, K % groupSize == 0,
// K <= 4096 since the gemv keeps M rows of f(x) in shared memory, and all three parts present).
bool quant_matmul_supported(const QuantDeviceWeight& w);

// M <= kQuantGemvMaxRows. Same argument meanings as launch_skinny_gemm (x is [M, K] of the
// element type for None, fp32 residual rows for RmsNorm, [M, 2K] gate|up for SiluMul).
void launch_quant_gemv(const void* x, const QuantDeviceWeight& w, void* out, int M, ElementType type, bool outFloat,
                       bool accumulate, cudaStream_t stream, SkinnyPrologue prologue = SkinnyPrologue::None,
                       const void* normWeight = nullptr, float eps = 0.0f);

// Any M >= 1; x is [M, K] of the element type. outFloat / accumulate as above.
void launch_quant_gemm(const void* x, const QuantDeviceWeight& w, void* out, int M, ElementType type, bool outFloat,
                       bool accumulate, cudaStream_t stream);

// out [N, K] (element type) = dequant(w), each value (q - zero) * scale in fp32 rounded once to
// the element type, the very values launch_quant_gemm multiplies. For long prefills a scratch
// copy plus a dense cuBLASLt GEMM can beat launch_quant_gemm (quant_matmul_bench compares).
void launch_quant_dequantize(const QuantDeviceWeight& w, void* out, ElementType type, cudaStream_t stream);

}  // namespace brook::cuda
