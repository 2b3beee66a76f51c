// Host side of the quantized matmuls: the device layout of a QuantizedWeight (packed codes,
// fp16 scales, byte zero points, each part 256-byte aligned so every row start the kernels
// load with 16-byte vectors is aligned) and the shape check both kernels rely on.
#include "cuda/cuda_check.h"
#include "cuda/quant_matmul.h"
#include "engine/quantized_weight.h"
#include "engine/tensor_view.h"

#include <string>
#include <vector>

namespace brook::cuda {

namespace {

constexpr size_t kPartAlignment = 256;
// The gemv keeps M rows of f(x) as fp32 in shared memory: 8 x 4096 x 4 bytes = 128 KiB.
constexpr int kMaxGemvK = 4096;

size_t alignUp(size_t bytes) { return (bytes + kPartAlignment - 1) / kPartAlignment * kPartAlignment; }

// Throws when the vectors disagree with the header fields (a loader bug, not user input).
void checkLayout(const QuantizedWeight& w)
{
    auto fail = [&](const std::string& what) {
        throw CudaError("upload_quantized_weight: " + what + " (rows " + std::to_string(w.rows) + ", cols " +
                        std::to_string(w.cols) + ", bits " + std::to_string(w.bits) + ", group " +
                        std::to_string(w.groupSize) + ")");
    };
    if ((w.bits != 4 && w.bits != 8) || w.groupSize <= 0 || w.rows <= 0 || w.cols <= 0 || w.cols % w.groupSize)
        fail("bad shape");
    const size_t groups = size_t(w.rows) * size_t(w.cols / w.groupSize);
    if (w.packed.size() != size_t(w.rows) * size_t(w.cols) * size_t(w.bits) / 8) fail("packed has the wrong size");
    if (w.scales.size() != groups) fail("scales has the wrong size");
    if (w.zeros.size() != groups) fail("zeros has the wrong size");
}

}  // namespace

size_t quantized_weight_device_bytes(const QuantizedWeight& w)
{
    return alignUp(w.packed.size()) + alignUp(w.scales.size() * sizeof(__half)) + alignUp(w.zeros.size());
}

QuantDeviceWeight upload_quantized_weight(const QuantizedWeight& w, void* dst)
{
    checkLayout(w);
    if (reinterpret_cast<uintptr_t>(dst) % kPartAlignment)
        throw CudaError("upload_quantized_weight: destination is not 256-byte aligned");
    std::vector<uint16_t> scales(w.scales.size());
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = floatToFp16(w.scales[i]);  // exact: scales are fp16 values

    auto* base = static_cast<uint8_t*>(dst);
    uint8_t* packed = base;
    uint8_t* scalesDst = packed + alignUp(w.packed.size());
    uint8_t* zeros = scalesDst + alignUp(scales.size() * sizeof(uint16_t));
    BROOK_CUDA_CHECK(cudaMemcpy(packed, w.packed.data(), w.packed.size(), cudaMemcpyHostToDevice));
    BROOK_CUDA_CHECK(cudaMemcpy(scalesDst, scales.data(), scales.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
    BROOK_CUDA_CHECK(cudaMemcpy(zeros, w.zeros.data(), w.zeros.size(), cudaMemcpyHostToDevice));

    QuantDeviceWeight view;
    view.packed = packed;
    view.scales = reinterpret_cast<const __half*>(scalesDst);
    view.zeros = zeros;
    view.bits = w.bits;
    view.groupSize = w.groupSize;
    view.rows = w.rows;
    view.cols = w.cols;
    return view;
}

bool quant_matmul_supported(const QuantDeviceWeight& w)
{
    return (w.bits == 4 || w.bits == 8) && w.groupSize > 0 && w.groupSize % 32 == 0 && w.rows > 0 && w.cols > 0 &&
           w.cols % w.groupSize == 0 && w.cols <= kMaxGemvK && w.packed && w.scales && w.zeros;
}

}  // namespace brook::cuda
