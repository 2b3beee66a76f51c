#include "engine/cpu/cpu_ops.h"

#include "engine/rope_frequencies.h"

#if BROOK_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <cmath>
#include <vector>

namespace brook::cpu {

void linear(const float* x, const float* w, float* out, int T, int K, int N)
{
    if (T == 0) return;
#if BROOK_HAVE_OPENBLAS
    if (T == 1) {
        // A GEMV streams the weight once; sgemm with M=1 is slower in OpenBLAS.
        cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, 1.0f, w, K, x, 1, 0.0f, out, 1);
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, N, K, 1.0f, x, K, w, K, 0.0f, out, N);
#else
    // Builds without OpenBLAS (Windows): fp32 matrices are rare there (4-bit checkpoints
    // dequantized); each weight row is read once for all T rows, the dot products vectorize.
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; ++n) {
        const float* row = w + int64_t(n) * K;
        for (int t = 0; t < T; ++t) {
            const float* in = x + int64_t(t) * K;
            float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
            for (int k = 0; k < K; ++k) sum += in[k] * row[k];
            out[int64_t(t) * N + n] = sum;
        }
    }
#endif
}

void rmsnorm(const float* x, const float* weight, float* out, int T, int H, float eps)
{
    for (int t = 0; t < T; ++t) {
        const float* row = x + int64_t(t) * H;
        float* dst = out + int64_t(t) * H;
        double sumSquares = 0.0;
        for (int i = 0; i < H; ++i) sumSquares += double(row[i]) * row[i];
        const float scale = 1.0f / std::sqrt(float(sumSquares / H) + eps);
        for (int i = 0; i < H; ++i) dst[i] = row[i] * scale * weight[i];
    }
}

void ropeInterleavedHeads(float* heads, int numHeads, int HD, int position, double theta)
{
    const std::vector<float> invFreq = ropeInverseFrequencies(theta, HD);
    for (int i = 0; i < HD / 2; ++i) {
        // Same arithmetic as transformers: angle = pos * inv_freq in fp32.
        const float angle = float(position) * invFreq[size_t(i)];
        const float c = std::cos(angle), s = std::sin(angle);
        for (int h = 0; h < numHeads; ++h) {
            float* pair = heads + int64_t(h) * HD + 2 * i;
            const float x0 = pair[0], x1 = pair[1];
            pair[0] = x0 * c - x1 * s;
            pair[1] = x1 * c + x0 * s;
        }
    }
}

void ropeInterleaved(float* headVec, int HD, int position, double theta)
{
    ropeInterleavedHeads(headVec, 1, HD, position, theta);
}

void siluMul(const float* gateUp, float* out, int T, int I)
{
    for (int t = 0; t < T; ++t) {
        const float* gate = gateUp + int64_t(t) * 2 * I;
        const float* up = gate + I;
        float* dst = out + int64_t(t) * I;
        for (int i = 0; i < I; ++i) {
            const float g = gate[i];
            dst[i] = g / (1.0f + std::exp(-g)) * up[i];
        }
    }
}

void pagedAttention(const float* q, float* out, int n, int numHeads, int startPosition,
                    std::span<const int32_t> blockTable, const PagedKv& kv)
{
    const int HD = kv.headDim;
    const int group = numHeads / kv.numKvHeads;
    const float scale = 1.0f / std::sqrt(float(HD));
    const int work = n * numHeads;
#pragma omp parallel for schedule(dynamic, 4) if (work * (startPosition + n) > 4096)
    for (int item = 0; item < work; ++item) {
        const int i = item / numHeads, h = item % numHeads;
        const int kvHead = h / group;
        const int position = startPosition + i;
        const float* qh = q + (int64_t(i) * numHeads + h) * HD;
        float* oh = out + (int64_t(i) * numHeads + h) * HD;
        std::vector<float> scores(position + 1);
        float maxScore = -INFINITY;
        for (int j = 0; j <= position; ++j) {
            const float* kj = kv.kAt(blockTable[j / kv.blockSize], j % kv.blockSize, kvHead);
            const int64_t kd = kv.keyDimStride();
            float dot = 0.0f;
            for (int d = 0; d < HD; ++d) dot += qh[d] * kj[d * kd];
            scores[j] = dot * scale;
            maxScore = std::max(maxScore, scores[j]);
        }
        float denom = 0.0f;
        for (int j = 0; j <= position; ++j) {
            scores[j] = std::exp(scores[j] - maxScore);
            denom += scores[j];
        }
        std::fill(oh, oh + HD, 0.0f);
        for (int j = 0; j <= position; ++j) {
            const float* vj = kv.vAt(blockTable[j / kv.blockSize], j % kv.blockSize, kvHead);
            const float p = scores[j] / denom;
            for (int d = 0; d < HD; ++d) oh[d] += p * vj[d];
        }
    }
}

}  // namespace brook::cpu
