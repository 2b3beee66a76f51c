// Scalar kernels: the reference every vector path is tested against (tests/engine/test_cpu_gemm.cpp),
// and the path for CPUs without AVX2. One fp32 accumulator per output, inputs in order.
#include "engine/cpu/cpu_gemm_kernels.h"

#include <algorithm>

namespace brook::cpu::kernels {

namespace {
constexpr int kB = CpuMatrix::kBlockRows;
}

void bf16Scalar(const CpuMatrix& w, const float* x, int T, float* out, int b0, int b1)
{
    const int K = w.cols(), N = w.rows(), P = w.pairs();
    for (int b = b0; b < b1; ++b) {
        const uint16_t* wb = w.bf16Block(b);
        const int lanes = std::min(kB, N - b * kB);
        for (int lane = 0; lane < lanes; ++lane) {
            for (int t = 0; t < T; ++t) {
                const float* xt = x + int64_t(t) * K;
                float acc = 0.0f;
                for (int k = 0; k < K; ++k) acc += bf16ToFloat(wb[size_t(k / 2) * 32 + lane * 2 + (k & 1)]) * xt[k];
                out[int64_t(t) * N + b * kB + lane] = acc;
            }
        }
        (void)P;
    }
}

void bf16DotScalar(const CpuMatrix& w, const uint32_t* xPairs, int T, float* out, int b0, int b1)
{
    const int N = w.rows(), P = w.pairs();
    for (int b = b0; b < b1; ++b) {
        const uint16_t* wb = w.bf16Block(b);
        const int lanes = std::min(kB, N - b * kB);
        for (int lane = 0; lane < lanes; ++lane) {
            for (int t = 0; t < T; ++t) {
                const uint32_t* xt = xPairs + int64_t(t) * P;
                float acc = 0.0f;
                for (int p = 0; p < P; ++p) {
                    const float x0 = bf16ToFloat(uint16_t(xt[p])), x1 = bf16ToFloat(uint16_t(xt[p] >> 16));
                    acc += bf16ToFloat(wb[size_t(p) * 32 + lane * 2]) * x0 +
                           bf16ToFloat(wb[size_t(p) * 32 + lane * 2 + 1]) * x1;
                }
                out[int64_t(t) * N + b * kB + lane] = acc;
            }
        }
    }
}

}  // namespace brook::cpu::kernels

namespace brook::cpu::kernels {

void toBf16PairsScalar(const float* x, int T, int K, uint32_t* xPairs)
{
    const int P = (K + 1) / 2;
    for (int t = 0; t < T; ++t) {
        const float* xt = x + int64_t(t) * K;
        for (int p = 0; p < P; ++p) {
            const uint32_t lo = floatToBf16(xt[2 * p]);
            const uint32_t hi = 2 * p + 1 < K ? floatToBf16(xt[2 * p + 1]) : 0u;
            xPairs[int64_t(t) * P + p] = lo | (hi << 16);
        }
    }
}

}  // namespace brook::cpu::kernels
