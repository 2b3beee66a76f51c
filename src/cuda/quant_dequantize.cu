// Dequantizes a quantized weight into a dense [N, K] element-type matrix: one thread per 16-byte
// chunk of codes (32 or 16 values, always inside one group), (q - zero) * scale exact in fp32 and
// rounded once, so the copy holds exactly what launch_quant_gemm feeds its MMAs. A memory-bound
// stream (reads bits/16 of what it writes). Reference: the layout in engine/quantized_weight.h;
// test: tests/cuda/test_quant_matmul.cpp.
#include "cuda/cuda_check.h"
#include "cuda/quant_matmul.h"

#include <string>

namespace brook::cuda {

namespace {

template <typename T, int BITS>
__global__ void quant_dequantize_kernel(const uint4* __restrict__ packed, const __half* __restrict__ scales,
                                        const uint8_t* __restrict__ zeros, T* __restrict__ out, int vectors, int K,
                                        int groupSize, int64_t chunks)
{
    constexpr int kCodes = 128 / BITS;  // per 16-byte chunk
    constexpr int kPerWord = 32 / BITS;
    constexpr uint32_t kMask = (1u << BITS) - 1;
    const int64_t chunk = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (chunk >= chunks) return;
    const int64_t row = chunk / vectors;
    const int k0 = int(chunk % vectors) * kCodes;
    const uint4 q = __ldg(packed + chunk);
    const int64_t g = row * (K / groupSize) + k0 / groupSize;
    const float scale = __half2float(scales[g]);
    const float zero = float(zeros[g]);
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
    __align__(16) T values[kCodes];
#pragma unroll
    for (int c = 0; c < kCodes; ++c) {
        const uint32_t code = (words[c / kPerWord] >> (BITS * (c % kPerWord))) & kMask;
        values[c] = fromFloat<T>((float(code) - zero) * scale);
    }
    uint4* dst = reinterpret_cast<uint4*>(out + row * K + k0);
#pragma unroll
    for (int i = 0; i < kCodes / 8; ++i) dst[i] = reinterpret_cast<const uint4*>(values)[i];
}

}  // namespace

void launch_quant_dequantize(const QuantDeviceWeight& w, void* out, ElementType type, cudaStream_t stream)
{
    if (!quant_matmul_supported(w))
        throw CudaError("launch_quant_dequantize: unsupported shape (N " + std::to_string(w.rows) + ", K " +
                        std::to_string(w.cols) + ", bits " + std::to_string(w.bits) + ", group " +
                        std::to_string(w.groupSize) + ")");
    const int vectors = w.cols * w.bits / 128;
    const int64_t chunks = int64_t(w.rows) * vectors;
    const int threads = 256;
    const unsigned blocks = unsigned((chunks + threads - 1) / threads);
    const auto* packed = reinterpret_cast<const uint4*>(w.packed);
    BROOK_DISPATCH_ELEMENT_TYPE(type, E, {
        if (w.bits == 4)
            quant_dequantize_kernel<E, 4><<<blocks, threads, 0, stream>>>(
                packed, w.scales, w.zeros, static_cast<E*>(out), vectors, w.cols, w.groupSize, chunks);
        else
            quant_dequantize_kernel<E, 8><<<blocks, threads, 0, stream>>>(
                packed, w.scales, w.zeros, static_cast<E*>(out), vectors, w.cols, w.groupSize, chunks);
    });
    BROOK_CUDA_CHECK_LAUNCH();
}

}  // namespace brook::cuda
