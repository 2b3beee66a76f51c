// quant_matmul_bench: ERNIE-4.5-0.3B's four projection shapes, bf16 dense against int8 and int4.
//   decode  M = 1:    launch_skinny_gemm (dense) vs launch_quant_gemv
//   prefill M = 2048: cuBLASLt (dense)           vs launch_quant_gemm, and vs
//                     launch_quant_dequantize into a bf16 scratch + cuBLASLt ("dq+blas")
// Each kernel is captured into a CUDA graph of back-to-back launches (as the decode graphs run
// them) and the graph replayed; time per launch = event time / launches. The launches cycle
// through enough copies of the weight to overflow the 50 MB L2, so the GEMV figures are HBM
// figures. "GB/s" counts the bytes a launch must move: weight (codes + fp16 scales + zeros, or
// bf16), x and out. Usage: quant_matmul_bench [replays (default 20)] [prefill M (default 2048)]
#include "cuda_graph_timer.h"
#include "cuda/cublaslt_gemm.h"
#include "cuda/cuda_check.h"
#include "cuda/quant_matmul.h"
#include "cuda/skinny_gemm.h"
#include "engine/quantized_weight.h"
#include "engine/tensor_view.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

using namespace brook;
using namespace brook::cuda;

namespace {

constexpr int kLaunchesPerGraph = 100;
constexpr size_t kRotationBytes = size_t(256) << 20;  // > 5x the H200's L2

struct Shape {
    const char* name;
    int N, K;
};

std::vector<uint16_t> randomBf16(size_t n, std::mt19937& rng, float scale)
{
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<uint16_t> v(n);
    for (auto& x : v) x = floatToBf16(dist(rng));
    return v;
}

QuantizedWeight randomQuantized(int N, int K, int bits, std::mt19937& rng)
{
    QuantizedWeight q;
    q.bits = bits;
    q.groupSize = 128;
    q.rows = N;
    q.cols = K;
    q.packed.resize(size_t(N) * K * bits / 8);
    q.scales.resize(size_t(N) * (K / 128));
    q.zeros.resize(q.scales.size());
    std::uniform_int_distribution<int> byte(0, 255), zero(0, (1 << bits) - 1);
    std::uniform_real_distribution<float> scale(0.001f, 0.01f);
    for (auto& b : q.packed) b = uint8_t(byte(rng));
    for (auto& s : q.scales) s = fp16ToFloat(floatToFp16(scale(rng)));
    for (auto& z : q.zeros) z = uint8_t(zero(rng));
    return q;
}

// Microseconds per launch of launch(copy) over a graph cycling through `copies`.
double timeLaunches(cudaStream_t stream, int copies, int replays, const std::function<void(int)>& launch)
{
    for (int i = 0; i < copies && i < 3; ++i) launch(i);  // warm-up outside the graph (sets attributes)
    BROOK_CUDA_CHECK(cudaStreamSynchronize(stream));
    return bench::timeGraphReplays(stream, replays,
                                   [&] {
                                       for (int i = 0; i < kLaunchesPerGraph; ++i) launch(i % copies);
                                   }) /
           kLaunchesPerGraph;
}

void report(const char* phase, const Shape& s, const char* format, int M, double us, double bytes)
{
    const double flops = 2.0 * M * s.N * s.K;
    std::printf("%-7s %-7s N %5d K %5d M %5d %-5s %9.2f us %8.1f GB/s %7.1f TFLOP/s\n", phase, s.name, s.N, s.K, M,
                format, us, bytes / us * 1e-3, flops / us * 1e-6);
}

void benchShape(const Shape& s, int replays, int prefillM, cudaStream_t stream, CublasLtGemm& cublas)
{
    std::mt19937 rng(s.N + s.K);
    const int maxM = std::max(1, prefillM);
    DeviceBuffer x(size_t(maxM) * s.K * 2), out(size_t(maxM) * s.N * 2);
    {
        const auto hx = randomBf16(size_t(maxM) * s.K, rng, 1.0f);
        BROOK_CUDA_CHECK(cudaMemcpy(x.get(), hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    }
    const double ioBytes1 = 2.0 * s.K + 2.0 * s.N;  // x and out at M = 1

    {  // bf16 dense
        const size_t bytes = size_t(s.N) * s.K * 2;
        const int copies = int(std::max<size_t>(1, kRotationBytes / bytes));
        DeviceBuffer w(bytes * copies);
        const auto hw = randomBf16(size_t(s.N) * s.K, rng, 0.03f);
        for (int c = 0; c < copies; ++c)
            BROOK_CUDA_CHECK(cudaMemcpy(w.as<uint8_t>() + bytes * c, hw.data(), bytes, cudaMemcpyHostToDevice));
        auto weight = [&](int c) { return static_cast<const void*>(w.as<uint8_t>() + bytes * c); };
        double us = timeLaunches(stream, copies, replays, [&](int c) {
            launch_skinny_gemm(x.get(), weight(c), out.get(), 1, s.N, s.K, ElementType::BF16, false, false, stream);
        });
        report("decode", s, "bf16", 1, us, double(bytes) + ioBytes1);
        if (prefillM > 0) {
            cublas.setUseSkinny(false);
            us = timeLaunches(stream, copies, replays, [&](int c) {
                cublas.matmul(x.get(), weight(c), out.get(), prefillM, s.N, s.K, ElementType::BF16, false, stream);
            });
            report("prefill", s, "bf16", prefillM, us, double(bytes) + 2.0 * prefillM * (s.K + s.N));
        }
    }
    for (int bits : {8, 4}) {
        const QuantizedWeight q = randomQuantized(s.N, s.K, bits, rng);
        const size_t bytes = quantized_weight_device_bytes(q);
        const int copies = int(std::max<size_t>(1, kRotationBytes / bytes));
        DeviceBuffer w(bytes * copies);
        std::vector<QuantDeviceWeight> views;
        for (int c = 0; c < copies; ++c) views.push_back(upload_quantized_weight(q, w.as<uint8_t>() + bytes * c));
        const double weightBytes = double(q.packed.size() + q.scales.size() * 2 + q.zeros.size());
        const char* format = bits == 8 ? "int8" : "int4";
        double us = timeLaunches(stream, copies, replays, [&](int c) {
            launch_quant_gemv(x.get(), views[c], out.get(), 1, ElementType::BF16, false, false, stream);
        });
        report("decode", s, format, 1, us, weightBytes + ioBytes1);
        if (prefillM > 0) {
            us = timeLaunches(stream, copies, replays, [&](int c) {
                launch_quant_gemm(x.get(), views[c], out.get(), prefillM, ElementType::BF16, false, false, stream);
            });
            report("prefill", s, format, prefillM, us, weightBytes + 2.0 * prefillM * (s.K + s.N));
            // The alternative: dequantize into a bf16 scratch, then the dense cuBLASLt GEMM.
            DeviceBuffer scratch(size_t(s.N) * s.K * 2);
            us = timeLaunches(stream, copies, replays, [&](int c) {
                launch_quant_dequantize(views[c], scratch.get(), ElementType::BF16, stream);
            });
            report("dequant", s, format, 0, us, weightBytes + double(scratch.bytes()));
            cublas.setUseSkinny(false);
            us = timeLaunches(stream, copies, replays, [&](int c) {
                launch_quant_dequantize(views[c], scratch.get(), ElementType::BF16, stream);
                cublas.matmul(x.get(), scratch.get(), out.get(), prefillM, s.N, s.K, ElementType::BF16, false, stream);
            });
            report("dq+blas", s, format, prefillM, us, weightBytes + 2.0 * prefillM * (s.K + s.N));
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    const int replays = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
    const int prefillM = argc > 2 ? std::max(0, std::atoi(argv[2])) : 2048;
    try {
        cudaDeviceProp prop{};
        BROOK_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        std::printf("%s, %d SMs, L2 %d MB; %d launches per graph x %d replays\n", prop.name, prop.multiProcessorCount,
                    prop.l2CacheSize >> 20, kLaunchesPerGraph, replays);
        cudaStream_t stream;
        BROOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CublasLtGemm cublas;
        const Shape shapes[] = {{"qkv", 2560, 1024}, {"o", 1024, 2048}, {"gateup", 6144, 1024}, {"down", 1024, 3072}};
        for (const Shape& s : shapes) benchShape(s, replays, prefillM, stream, cublas);
        BROOK_CUDA_CHECK(cudaStreamDestroy(stream));
    } catch (const CudaError& e) {
        std::fprintf(stderr, "quant_matmul_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
