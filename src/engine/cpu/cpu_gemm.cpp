#include "engine/cpu/cpu_gemm.h"

#include "engine/cpu/cpu_gemm_kernels.h"
#include "engine/cpu/cpu_ops.h"

#include <algorithm>
#include <vector>

namespace brook::cpu {

namespace {

// Below this many multiply-adds handing work to the pool costs more than it saves (tiny models).
constexpr int64_t kParallelMinWork = int64_t(1) << 16;

// Runs body(b0, b1) over all blocks: on the pool in chunks handed out dynamically (a thread that
// is descheduled for a time slice on a shared machine then holds up nobody; see
// cpu_thread_pool.h), about 8 chunks a thread, each a contiguous run of >= 2 blocks (an even
// count, so the two-block vdpbf16ps kernel never splits a pair and each grab streams a long
// stretch of the weight). Without a pool, or for tiny work, on the calling thread.
template <typename Body>
void forBlocks(CpuThreadPool* pool, int numBlocks, int64_t work, const Body& body)
{
    if (!pool || pool->threads() == 1 || work < kParallelMinWork || numBlocks < 2) {
        body(0, numBlocks);
        return;
    }
    int chunk = std::max(2, numBlocks / (pool->threads() * 8));
    chunk += chunk % 2;
    const int chunks = (numBlocks + chunk - 1) / chunk;
    pool->run(chunks, [&](int c) { body(c * chunk, std::min(numBlocks, (c + 1) * chunk)); });
}

void matmulBf16(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool)
{
    const int K = w.cols();
    const int64_t work = int64_t(T) * w.rows() * K;
    if (K % 2 != 0) isa = CpuIsa::Scalar;  // the vector kernels read inputs in pairs
    if (isa == CpuIsa::Avx512Bf16 && T >= kBf16DotMinTokens) {
        // The calling thread's scratch; the pointer (not the thread_local name, which would name
        // each worker's own empty vector) goes to the team.
        thread_local std::vector<uint32_t> scratch;
        scratch.resize(size_t(T) * size_t(w.pairs()));
        const uint32_t* pairs = scratch.data();
        kernels::toBf16PairsAvx512Bf16(x, T, K, scratch.data());
        forBlocks(pool, w.numBlocks(), work, [&](int b0, int b1) { kernels::bf16DotAvx512(w, pairs, T, out, b0, b1); });
        return;
    }
    forBlocks(pool, w.numBlocks(), work, [&](int b0, int b1) {
        switch (isa) {
        case CpuIsa::Scalar: kernels::bf16Scalar(w, x, T, out, b0, b1); break;
        case CpuIsa::Avx2: kernels::bf16Avx2(w, x, T, out, b0, b1); break;
        case CpuIsa::Avx512:
        case CpuIsa::Avx512Bf16: kernels::bf16Avx512(w, x, T, out, b0, b1); break;
        }
    });
}

void matmulQ8(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool)
{
    const int K = w.cols(), G = w.groups(), gs = w.groupSize();
    thread_local std::vector<float> scratch;  // [T, G]; the team gets the pointer (see matmulBf16)
    scratch.resize(size_t(T) * size_t(G));
    float* sums = scratch.data();
    for (int t = 0; t < T; ++t)
        for (int g = 0; g < G; ++g) {
            float s = 0.0f;
            for (int k = g * gs; k < (g + 1) * gs; ++k) s += x[int64_t(t) * K + k];
            sums[size_t(t) * G + g] = s;
        }
    const int64_t work = int64_t(T) * w.rows() * K;
    forBlocks(pool, w.numBlocks(), work, [&](int b0, int b1) {
        switch (isa) {
        case CpuIsa::Scalar: kernels::q8Scalar(w, x, sums, T, out, b0, b1); break;
        case CpuIsa::Avx2: kernels::q8Avx2(w, x, sums, T, out, b0, b1); break;
        case CpuIsa::Avx512:
        case CpuIsa::Avx512Bf16: kernels::q8Avx512(w, x, sums, T, out, b0, b1); break;
        }
    });
}

}  // namespace

void matmul(const CpuMatrix& w, const float* x, float* out, int T, CpuIsa isa, CpuThreadPool* pool)
{
    if (T <= 0) return;
    switch (w.format()) {
    case MatrixFormat::F32: linear(x, w.f32(), out, T, w.cols(), w.rows()); return;
    case MatrixFormat::BF16: matmulBf16(w, x, out, T, isa, pool); return;
    case MatrixFormat::Q8: matmulQ8(w, x, out, T, isa, pool); return;
    }
}

}  // namespace brook::cpu
