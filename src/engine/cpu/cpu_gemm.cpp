#include "engine/cpu/cpu_gemm.h"

#include "engine/cpu/cpu_gemm_kernels.h"
#include "engine/cpu/cpu_gemm_q8.h"

#include <algorithm>
#include <vector>

namespace brook::cpu {

namespace {

void matmulBf16(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool,
                MatmulScratch& scratch, Bf16Arithmetic arithmetic)
{
    const int K = w.cols();
    const int64_t work = int64_t(T) * w.rows() * K;
    if (K % 2 != 0) isa = CpuIsa::Scalar;  // the vector kernels read inputs in pairs
    if (isa == CpuIsa::Avx512Bf16 && arithmetic == Bf16Arithmetic::RoundedActivations) {
        // The caller's scratch; the team gets the pointer (a thread_local name would name each
        // worker's own empty vector).
        scratch.bf16Pairs.resize(size_t(T) * size_t(w.pairs()));
        const uint32_t* pairs = scratch.bf16Pairs.data();
        uint32_t* const pairsOut = scratch.bf16Pairs.data();
        // A prompt's rows are converted on all cores (256 x 3,072 values for ERNIE's down
        // projection); a decode batch's few rows on the caller.
        constexpr int kConvertRows = 16;
        if (T >= kParallelConvertMinTokens) {
            forRowChunks(pool, T, kConvertRows, [&](int t0, int t1) {
                kernels::toBf16PairsAvx512Bf16(x + int64_t(t0) * K, t1 - t0, K, pairsOut + int64_t(t0) * w.pairs());
            });
        } else {
            kernels::toBf16PairsAvx512Bf16(x, T, K, pairsOut);
        }
        forGuidedBlocks(pool, w.numBlocks(), work,
                        [&](int b0, int b1) { kernels::bf16DotAvx512(w, pairs, T, out, b0, b1); });
        return;
    }
    forGuidedBlocks(pool, w.numBlocks(), work, [&](int b0, int b1) {
        switch (isa) {
        case CpuIsa::Scalar: kernels::bf16Scalar(w, x, T, out, b0, b1); break;
        case CpuIsa::Avx2: kernels::bf16Avx2(w, x, T, out, b0, b1); break;
        case CpuIsa::Avx512:
        case CpuIsa::Avx512Vnni:
        case CpuIsa::Avx512Bf16: kernels::bf16Avx512(w, x, T, out, b0, b1); break;
        }
    });
}

// Quantizes x per block of 32 (cpu_gemm_q8.h) into the calling thread's scratch, then runs the
// int8 kernel of `isa` over the row blocks (Q8 or Q4 weights: the kernels expand 4-bit codes).
void matmulQ8(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool,
              MatmulScratch& scratch)
{
    constexpr int kQ = CpuMatrix::kQ8Block;
    const int K = w.cols(), G = w.groups(), KB = K / kQ, blocksPerGroup = KB / G;
    // The team gets pointers to these (see matmulBf16).
    std::vector<int8_t>& codes = scratch.codes;
    std::vector<float>& scales = scratch.scales;
    std::vector<float>& groupSums = scratch.groupSums;
    std::vector<int32_t>& blockSums = scratch.blockSums;
    codes.resize(size_t(T) * size_t(K));
    scales.resize(size_t(T) * size_t(KB));
    blockSums.resize(size_t(T) * size_t(KB));
    groupSums.resize(size_t(T) * size_t(G));
    int8_t* const codesOut = codes.data();
    float* const scalesOut = scales.data();
    float* const groupSumsOut = groupSums.data();
    int32_t* const blockSumsOut = blockSums.data();
    // Tokens' rows are contiguous runs of KB blocks (K is a multiple of 32).
    const auto quantizeTokens = [&](int t0, int t1) {
        const float* src = x + int64_t(t0) * K;
        const int64_t blocks = int64_t(t1 - t0) * KB, first = int64_t(t0) * KB;
        int8_t* c = codesOut + int64_t(t0) * K;
        float* d = scalesOut + first;
        int32_t* sums = blockSumsOut + first;
        switch (isa) {
        case CpuIsa::Scalar: kernels::quantizeQ8Scalar(src, blocks, c, d, sums); break;
        case CpuIsa::Avx2: kernels::quantizeQ8Avx2(src, blocks, c, d, sums); break;
        default: kernels::quantizeQ8Avx512(src, blocks, c, d, sums); break;
        }
        // X_g in block order, the same code for every path.
        for (int t = t0; t < t1; ++t)
            for (int g = 0; g < G; ++g) {
                float sum = 0.0f;
                for (int kb = g * blocksPerGroup; kb < (g + 1) * blocksPerGroup; ++kb)
                    sum += scalesOut[int64_t(t) * KB + kb] * float(blockSumsOut[int64_t(t) * KB + kb]);
                groupSumsOut[int64_t(t) * G + g] = sum;
            }
    };
    // A prompt's activations are worth splitting (128 x 3,072 values); a decode row is not.
    if (pool && T >= kParallelConvertMinTokens) {
        const int perItem = 8;
        pool->run((T + perItem - 1) / perItem,
                  [&](int i) { quantizeTokens(i * perItem, std::min(T, (i + 1) * perItem)); });
    } else {
        quantizeTokens(0, T);
    }
    const kernels::Q8Activations a{T, K, G, codesOut, scalesOut, blockSumsOut, groupSumsOut};
    const int64_t work = int64_t(T) * w.rows() * K;
    forGuidedBlocks(pool, w.numBlocks(), work, [&](int b0, int b1) {
        switch (isa) {
        case CpuIsa::Scalar: kernels::q8Scalar(w, a, out, b0, b1); break;
        case CpuIsa::Avx2:
        case CpuIsa::Avx512: kernels::q8Avx2(w, a, out, b0, b1); break;
        case CpuIsa::Avx512Vnni:
        case CpuIsa::Avx512Bf16: kernels::q8Avx512Vnni(w, a, out, b0, b1); break;
        }
    });
}

// The fp32 kernel of `isa` over the row blocks (cpu_gemm_f32.cpp).
void matmulF32(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool)
{
    const int64_t work = int64_t(T) * w.rows() * w.cols();
    forGuidedBlocks(pool, w.numBlocks(), work, [&](int b0, int b1) {
        switch (isa) {
        case CpuIsa::Scalar: kernels::f32Scalar(w, x, T, out, b0, b1); break;
        case CpuIsa::Avx2: kernels::f32Avx2(w, x, T, out, b0, b1); break;
        case CpuIsa::Avx512:
        case CpuIsa::Avx512Vnni:
        case CpuIsa::Avx512Bf16: kernels::f32Avx512(w, x, T, out, b0, b1); break;
        }
    });
}

}  // namespace

void matmul(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool,
            MatmulScratch* scratch, Bf16Arithmetic arithmetic)
{
    if (T <= 0) return;
    thread_local MatmulScratch threadScratch;
    MatmulScratch& s = scratch ? *scratch : threadScratch;
    switch (w.format()) {
    case MatrixFormat::F32: matmulF32(w, x, out, T, isa, pool); return;
    case MatrixFormat::BF16: matmulBf16(w, x, out, T, isa, pool, s, arithmetic); return;
    case MatrixFormat::Q8:
    case MatrixFormat::Q4: matmulQ8(w, x, out, T, isa, pool, s); return;
    }
}

}  // namespace brook::cpu
