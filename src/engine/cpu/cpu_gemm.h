// matmul: out[T, N] = x[T, K] @ W[N, K]^T for a CpuMatrix in any format, on the vector path
// `isa` (activeCpuIsa() in the backend), split over the output rows across the backend's
// persistent CpuThreadPool (a step creates no threads).
//
// Which kernel runs (measured choices, docs/benchmarks.md "CPU backend"). The choice depends on
// the weight format, the CPU and the Bf16Arithmetic, never on T: each output is then summed in
// the same order whatever else is in the step, so a request's tokens and logprobs do not depend
// on batching, chunked prefill or prefix-cache hits (docs/server.md "Determinism";
// tests/engine/test_batch_invariance.cpp).
//   F32             -> one fp32 accumulator of 8 or 16 lanes per output (cpu_gemm_f32.cpp).
//   BF16, RoundedActivations on Avx512Bf16
//                   -> activations rounded to bf16, vdpbf16ps (twice the FMA rate of widening:
//                      prefill is compute-bound; a decode streams the weights either way). Each
//                      product loses at most 2^-9 relative (the rounding of x), as llama.cpp's
//                      bf16 path, which rounds every activation to bf16 too.
//   BF16, Fp32 or a CPU without AVX-512 BF16
//                   -> widen bf16 -> fp32 in registers, fp32 FMAs: exactly the fp32 reference's
//                      products (bf16 -> fp32 is exact), only the summation order differs. All
//                      T rows are computed from one read of each weight block, so a batch of 8
//                      decodes streams the weights once per step, not 8 times.
//   Q8              -> activations quantized to int8 per block of 32 inputs (a scale each), int32
//                      dot products (vpdpbusd on AVX-512 VNNI, vpmaddubsw on AVX2, plain C++ on
//                      scalar), scaled to fp32 per block and group; every path computes the same
//                      output bit for bit (cpu_gemm_q8.h).
// Vector kernels need even K (every ERNIE Linear has it); odd K runs the scalar kernel.
#pragma once

#include "engine/cpu/cpu_features.h"
#include "engine/cpu/cpu_matrix.h"
#include "engine/cpu/cpu_thread_pool.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace brook::cpu {

// How a bf16 Linear computes. RoundedActivations is the default (llama.cpp's arithmetic, and its
// speed); Fp32 is --dtype float32's exact mode (transformers' fp32 forward of the same weights).
enum class Bf16Arithmetic { RoundedActivations, Fp32 };

// From this many tokens the activations are converted (to bf16 pairs, int8 codes) on the whole
// pool rather than on the caller: it changes who computes them, never the values.
constexpr int kParallelConvertMinTokens = 4;

// Below this many multiply-adds handing work to the pool costs more than it saves (tiny models).
constexpr int64_t kParallelMinWork = int64_t(1) << 16;

// Runs body(b0, b1) over a matrix's row blocks [0, numBlocks) as matmul splits them (public so a
// benchmark can read the same blocks in the same order without the arithmetic): on the pool in
// chunks handed out dynamically (a thread that is descheduled for a time slice on a shared
// machine then holds up nobody; see cpu_thread_pool.h), without a pool or for tiny work (`work`
// multiply-adds) on the calling thread. Chunks are guided: each is a 1 / threads share of the
// blocks not yet handed out, so each thread's first grab streams one long stretch of the weight
// (a decode GEMV is a memory stream, and every new stretch restarts the prefetchers), and the
// shrinking chunks after it even out the finish. Each chunk is an even run of >= 2 blocks, so the
// two-block vdpbf16ps kernel never splits a pair. Against 8 equal chunks a thread, the 72 Linears
// of a batch-1 decode step ran 7-9% faster (docs/benchmarks.md).
template <typename Body>
void forGuidedBlocks(CpuThreadPool* pool, int numBlocks, int64_t work, const Body& body)
{
    if (!pool || pool->threads() == 1 || work < kParallelMinWork || numBlocks < 2) {
        body(0, numBlocks);
        return;
    }
    constexpr int kMaxChunks = 256;  // past it the last chunk takes the rest (~50 threads and more)
    std::array<int, kMaxChunks + 1> starts;
    const int threads = pool->threads();
    int chunks = 0;
    for (int b = 0; b < numBlocks; ++chunks) {
        starts[size_t(chunks)] = b;
        int chunk = std::max(2, (numBlocks - b) / threads);
        chunk += chunk % 2;
        b = chunks + 1 == kMaxChunks ? numBlocks : std::min(numBlocks, b + chunk);
    }
    starts[size_t(chunks)] = numBlocks;
    pool->run(chunks, [&](int c) { body(starts[size_t(c)], starts[size_t(c) + 1]); });
}

// The activations as the kernels read them (bf16 pairs, or int8 codes with their scales and
// sums), kept between calls so a step allocates nothing.
struct MatmulScratch {
    std::vector<uint32_t> bf16Pairs;
    std::vector<int8_t> codes;
    std::vector<float> scales, groupSums;
    std::vector<int32_t> blockSums;
};

// Thread-safe for distinct `out`, distinct pools and distinct scratch. pool: where the row blocks
// run (null: all on the calling thread). scratch: null uses the calling thread's own; the backend
// passes its own, which its warm-up pass sizes at load on the loading thread (the engine thread
// that steps it later would otherwise grow a thread_local one inside its first long prompt: ~500
// first touches of 4 KB pages, ~15 us each in a VM).
void matmul(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool = nullptr,
            MatmulScratch* scratch = nullptr, Bf16Arithmetic arithmetic = Bf16Arithmetic::RoundedActivations);

}  // namespace brook::cpu
