// The int8 scheme's reference (cpu_gemm_q8.h): plain loops, one int32 sum per block and the fp32
// steps with std::fma in the order every vector path uses. Also the path for CPUs without AVX2.
#include "engine/cpu/cpu_gemm_q8.h"

#include <algorithm>
#include <cmath>

namespace brook::cpu::kernels {

namespace {
constexpr int kB = CpuMatrix::kBlockRows;
constexpr int kQ = CpuMatrix::kQ8Block;
}  // namespace

void quantizeQ8Scalar(const float* x, int64_t blocks, int8_t* codes, float* scales, int32_t* sums)
{
    for (int64_t b = 0; b < blocks; ++b) {
        const float* xb = x + b * kQ;
        float amax = 0.0f;
        for (int i = 0; i < kQ; ++i) amax = std::max(amax, std::fabs(xb[i]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int32_t sum = 0;
        for (int i = 0; i < kQ; ++i) {
            // Round half to even (the default rounding mode), as vcvtps2dq does.
            const float r = std::clamp(std::nearbyint(xb[i] * id), -127.0f, 127.0f);
            codes[b * kQ + i] = int8_t(r);
            sum += int32_t(r);
        }
        scales[b] = d;
        sums[b] = sum;
    }
}

void q8Scalar(const CpuMatrix& w, const Q8Activations& a, float* out, int b0, int b1)
{
    const int K = a.K, N = w.rows(), G = a.G, KB = K / kQ, blocksPerGroup = w.groupSize() / kQ;
    for (int b = b0; b < b1; ++b) {
        const uint8_t* codes = w.q8Block(b);
        const float* scales = w.q8Scales(b);
        const float* offsets = w.q8Offsets(b);
        const int lanes = std::min(kB, N - b * kB);
        for (int lane = 0; lane < lanes; ++lane) {
            for (int t = 0; t < a.T; ++t) {
                const int8_t* at = a.codes + int64_t(t) * K;
                float acc = 0.0f;
                for (int g = 0; g < G; ++g) {
                    float inner = 0.0f;
                    for (int kb = g * blocksPerGroup; kb < (g + 1) * blocksPerGroup; ++kb) {
                        int32_t dot = 0;
                        for (int k = kb * kQ; k < (kb + 1) * kQ; ++k)
                            dot += int32_t(CpuMatrix::codeAt(codes, w.nibbles(), lane, k)) * at[k];
                        inner = std::fma(float(dot), a.scales[int64_t(t) * KB + kb], inner);
                    }
                    acc = std::fma(inner, scales[g * kB + lane], acc);
                    acc = std::fma(offsets[g * kB + lane], a.groupSums[int64_t(t) * G + g], acc);
                }
                out[int64_t(t) * N + b * kB + lane] = acc;
            }
        }
    }
}

}  // namespace brook::cpu::kernels
