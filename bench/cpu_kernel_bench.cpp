// cpu_kernel_bench: the CPU backend's kernels at ERNIE-4.5-0.3B's shapes, on every vector path
// this CPU supports (or --isa NAME): matmul per Linear (bf16 and int8) at T = 1, 8 and 128 (or
// --tokens; on --threads workers), the
// CPU sampler on one row of 103,424 logits (temperature 0.8, top-p 0.8), and the layer's
// element-wise ops. Best of --repeats timed runs after one warm-up; GB/s counts weight bytes read
// once, GFLOP/s 2 T N K. Run it on an idle machine: every figure is wall time.
// --read-bandwidth: the host's memory read rate this minute (the decode floor moves with it).
// --compute-peak: the host's vdpbf16ps rate this minute (the prefill and batch-decode floor).
// --attention N: one layer's attention for a prompt of N new tokens over --context cached ones
// (ERNIE's 16 / 2 heads of 128, 16-slot blocks in shuffled order) on each path; GFLOP/s counts
// the causal q.k and p.v products, 4 HD flops a (query, head, key).
#include "engine/cpu/cpu_attention.h"
#include "engine/cpu/cpu_features.h"
#include "engine/cpu/cpu_gemm.h"
#include "engine/cpu/cpu_matrix.h"
#include "engine/cpu/cpu_thread_pool.h"
#include "engine/cpu/cpu_vector_ops.h"
#include "engine/cpu/huge_page_allocator.h"
#include "engine/cpu/weight_prefetch.h"
#include "engine/sampler.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <immintrin.h>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace brook;
using namespace brook::cpu;

namespace {

double bestSeconds(int repeats, const std::function<void()>& body)
{
    body();  // warm-up: caches, page faults, the OpenMP team
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        body();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

std::vector<float> randomFloats(size_t n, uint32_t seed, float scale)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng);
    return v;
}

struct Shape {
    const char* name;
    int N, K;
};

// What the weights of a decode step meet: a 1 GiB buffer on huge pages (as the backend keeps its
// weights), read once per round by the pool's threads in 1 MB chunks with the fastest dot kernel
// (two vector accumulators, far faster than memory). The host's rate varies by minutes on a
// shared VM (40-68 GB/s in one hour on 2026-12-02), and a bf16 decode step reads 0.69 GB, so
// decode tok/s is best read next to this figure.
void readBandwidth(int rounds, CpuThreadPool* pool)
{
    constexpr size_t kBytes = size_t(1) << 30, kChunkFloats = (size_t(1) << 20) / sizeof(float);
    constexpr size_t kFloats = kBytes / sizeof(float), kChunks = kFloats / kChunkFloats;
    std::vector<float, HugePageAllocator<float>> buffer(kFloats, 1.0f);  // first touch: on huge pages
    const CpuVectorOps& ops = CpuVectorOps::forIsa(detectCpuIsa());
    std::vector<float> sums(kChunks);
    const auto readAll = [&] {
        const auto readChunk = [&](int c) {
            const float* chunk = buffer.data() + size_t(c) * kChunkFloats;
            sums[size_t(c)] = ops.dot(chunk, chunk, int(kChunkFloats));
        };
        if (pool) pool->run(int(kChunks), readChunk);
        else
            for (size_t c = 0; c < kChunks; ++c) readChunk(int(c));
    };
    std::vector<double> rates;
    readAll();  // warm-up
    for (int r = 0; r < std::max(rounds, 1); ++r) {
        const auto start = std::chrono::steady_clock::now();
        readAll();
        rates.push_back(double(kBytes) /
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 1e9);
    }
    std::sort(rates.begin(), rates.end());
    float check = 0.0f;
    for (float s : sums) check += s;
    std::printf(
        "memory read, %d thread(s), 1 GiB on huge pages: median %.1f GB/s, best %.1f GB/s (%d rounds; check %g)\n",
        pool ? pool->threads() : 1, rates[rates.size() / 2], rates.back(), int(rates.size()), double(check));
}

// Twelve independent vdpbf16ps chains, `iterations` times: the instruction's own rate, with no
// loads (latency 6 on Zen 4, so twelve chains keep one issue a cycle busy). The hosts of this VM
// type differ by day: on 2026-12-03 two cores did 3.6 G a second each (460 GFLOP/s in all),
// below what the prompts of 2026-12-02 needed, so the prefill and batch-8 figures are read
// beside this one.
__attribute__((target("avx512f,avx512bw,avx512bf16"))) float dpbf16Chains(long iterations)
{
    constexpr int kChains = 12;
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
    __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80), b = (__m512bh)_mm512_set1_epi32(0x3a003a00);
    for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
        asm volatile("" : "+v"(a), "+v"(b));  // keeps the operands in registers, the loop un-hoisted
    }
    float lanes[16 * kChains];
    for (int i = 0; i < kChains; ++i) _mm512_storeu_ps(lanes + 16 * i, acc[i]);
    float sum = 0.0f;
    for (float lane : lanes) sum += lane;
    return sum;
}

void computePeak(int rounds, CpuThreadPool* pool)
{
    if (detectCpuIsa() != CpuIsa::Avx512Bf16) {
        std::printf("compute peak: this CPU has no AVX-512 BF16\n");
        return;
    }
    constexpr long kIterations = 50'000'000;  // ~0.17 s a core at 3.6 GHz
    const int threads = pool ? pool->threads() : 1;
    std::vector<float> sums(static_cast<size_t>(threads));
    std::vector<double> rates;
    for (int r = 0; r < std::max(rounds, 1); ++r) {
        const auto start = std::chrono::steady_clock::now();
        if (pool) pool->run(threads, [&](int t) { sums[size_t(t)] = dpbf16Chains(kIterations); });
        else sums[0] = dpbf16Chains(kIterations);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        rates.push_back(double(threads) * kIterations * 12 * 64 / seconds / 1e9);  // 64 FLOP an instruction
    }
    std::sort(rates.begin(), rates.end());
    std::printf("compute peak, %d thread(s), vdpbf16ps zmm: median %.0f GFLOP/s, best %.0f GFLOP/s (%d rounds; "
                "check %g)\n",
                threads, rates[rates.size() / 2], rates.back(), int(rates.size()), double(sums[0]));
}

// OR of every 64-byte line of [p, p + bytes): a read of memory as fast as loads issue.
__attribute__((target("avx2"))) uint64_t readLines(const void* p, size_t bytes)
{
    const char* c = static_cast<const char*>(p);
    __m256i a = _mm256_setzero_si256(), b = a;
    size_t i = 0;
    for (; i + 64 <= bytes; i += 64) {
        a = _mm256_or_si256(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + i)));
        b = _mm256_or_si256(b, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + i + 32)));
    }
    a = _mm256_or_si256(a, b);
    uint64_t lanes[4];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), a);
    uint64_t r = lanes[0] | lanes[1] | lanes[2] | lanes[3];
    for (; i < bytes; ++i) r |= uint8_t(c[i]);
    return r;
}

// The bf16 blocks of w read by readLines, split over the pool as matmul splits a T-token matmul.
uint64_t readMatrix(const CpuMatrix& w, int T, CpuThreadPool* pool)
{
    std::vector<uint64_t> sums(static_cast<size_t>(w.numBlocks()), 0);
    const size_t blockBytes = size_t(w.pairs()) * CpuMatrix::kBlockRows * 2 * sizeof(uint16_t);
    forGuidedBlocks(pool, w.numBlocks(), int64_t(T) * w.rows() * w.cols(), [&](int b0, int b1) {
        sums[size_t(b0)] = readLines(w.bf16Block(b0), blockBytes * size_t(b1 - b0));
    });
    uint64_t r = 0;
    for (uint64_t v : sums) r |= v;
    return r;
}

// One matrix of the cold sweep: bf16, or int8 as brook-quantize makes it (RTN, groups of 128).
CpuMatrix coldMatrix(int N, int K, bool int8, const std::function<float(int, int)>& value)
{
    if (!int8)
        return CpuMatrix::fromBf16(N, K, [&](int n, uint16_t* row) {
            for (int k = 0; k < K; ++k) row[k] = floatToBf16(value(n, k));
        });
    std::vector<float> values(size_t(N) * K);
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k) values[size_t(n) * K + k] = value(n, k);
    return CpuMatrix::fromQ8(*quantizeRtn(values, N, K, 8, 128));
}

// The decode step's Linears as the backend meets them: `layers` layers' distinct bf16 weights
// (~28 MB a layer, far beyond the caches) and the head, in order, so every matmul streams its
// weights from memory. Rounds alternate the token counts (the same minutes for each), and the
// median round of each is printed: the excess of T = 8 over T = 1 is the compute that does not
// overlap the weight stream. bf16 rounds also read the same blocks with no arithmetic, split over
// the pool as matmul splits them (forGuidedBlocks): the floor a GEMV of these weights can reach
// on this host in these minutes, however its kernel is written.
void coldSweep(int layers, const std::vector<int>& tokens, int rounds, CpuIsa isa, CpuThreadPool* pool, bool int8)
{
    const std::vector<Shape> shapes = {
        {"qkv", 2560, 1024}, {"o", 1024, 2048}, {"gate_up", 6144, 1024}, {"down", 1024, 3072}};
    std::vector<CpuMatrix> weights;
    size_t layerBytes = 0;
    for (int l = 0; l < layers; ++l)
        for (const Shape& s : shapes) {
            weights.push_back(
                coldMatrix(s.N, s.K, int8, [&](int n, int k) { return float((n * 31 + k * 7 + l) % 97) * 1e-3f; }));
            layerBytes += weights.back().bytes();
        }
    const CpuMatrix head = coldMatrix(103424, 1024, int8, [](int n, int k) { return float((n + k) % 89) * 1e-3f; });
    std::printf("cold sweep: %s weights, %.1f MB of Linears, %.1f MB of head\n", int8 ? "int8" : "bf16",
                double(layerBytes) / 1e6, double(head.bytes()) / 1e6);
    const int maxT = *std::max_element(tokens.begin(), tokens.end());
    const std::vector<float> x = randomFloats(size_t(maxT) * 3072, 9, 1.0f);
    std::vector<float> out(size_t(maxT) * 103424);
    // With and without the kernels' software prefetch (weight_prefetch.h: the int8 few-token
    // kernel and the vdpbf16ps one), alternating within each round as the backend's calibration does.
    const std::vector<bool> prefetch = {true, false};
    const size_t runs = tokens.size() * prefetch.size();
    std::vector<std::vector<double>> layerMs(runs), headMs(runs);
    std::vector<double> readLayerMs, readHeadMs;
    uint64_t readCheck = 0;
    for (int r = 0; r < rounds; ++r) {
        if (!int8) {  // the read-only floor, once a round, with T = 1's split
            auto start = std::chrono::steady_clock::now();
            for (const CpuMatrix& w : weights) readCheck |= readMatrix(w, 1, pool);
            auto mid = std::chrono::steady_clock::now();
            readCheck |= readMatrix(head, 1, pool);
            auto end = std::chrono::steady_clock::now();
            readLayerMs.push_back(std::chrono::duration<double, std::milli>(mid - start).count());
            readHeadMs.push_back(std::chrono::duration<double, std::milli>(end - mid).count());
        }
        for (size_t i = 0; i < tokens.size(); ++i) {
            for (size_t p = 0; p < prefetch.size(); ++p) {
                setWeightPrefetch(prefetch[p]);
                auto start = std::chrono::steady_clock::now();
                for (const CpuMatrix& w : weights) matmul(w, x.data(), out.data(), tokens[i], isa, pool);
                auto mid = std::chrono::steady_clock::now();
                matmul(head, x.data(), out.data(), tokens[i], isa, pool);
                auto end = std::chrono::steady_clock::now();
                layerMs[i * prefetch.size() + p].push_back(
                    std::chrono::duration<double, std::milli>(mid - start).count());
                headMs[i * prefetch.size() + p].push_back(std::chrono::duration<double, std::milli>(end - mid).count());
            }
        }
    }
    setWeightPrefetch(true);
    for (size_t run = 0; run < runs; ++run) {
        std::sort(layerMs[run].begin(), layerMs[run].end());
        std::sort(headMs[run].begin(), headMs[run].end());
        const double layersMedian = layerMs[run][layerMs[run].size() / 2],
                     headMedian = headMs[run][headMs[run].size() / 2];
        std::printf("cold T=%-3d%s %d layers' Linears: median %.2f ms (best %.2f, %.1f GB/s), head: median %.2f ms "
                    "(best %.2f, %.1f GB/s)\n",
                    tokens[run / prefetch.size()], prefetch[run % prefetch.size()] ? " prefetch" : " no prefetch",
                    layers, layersMedian, layerMs[run].front(), double(layerBytes) / layersMedian / 1e6, headMedian,
                    headMs[run].front(), double(head.bytes()) / headMedian / 1e6);
    }
    if (!readLayerMs.empty()) {
        std::sort(readLayerMs.begin(), readLayerMs.end());
        std::sort(readHeadMs.begin(), readHeadMs.end());
        const double layersMedian = readLayerMs[readLayerMs.size() / 2], headMedian = readHeadMs[readHeadMs.size() / 2];
        std::printf("cold read only (same blocks, no arithmetic) %d layers' Linears: median %.2f ms (best %.2f, %.1f "
                    "GB/s), head: median %.2f ms (best %.2f, %.1f GB/s; check %llu)\n",
                    layers, layersMedian, readLayerMs.front(), double(layerBytes) / layersMedian / 1e6, headMedian,
                    readHeadMs.front(), double(head.bytes()) / headMedian / 1e6,
                    static_cast<unsigned long long>(readCheck & 1));
    }
}

void attentionSweep(int n, int context, const std::vector<CpuIsa>& isas, int repeats, CpuThreadPool* pool)
{
    constexpr int kHeads = 16, kKvHeads = 2, kHeadDim = 128, kBlockSize = 16;
    const int keys = context + n, blocks = (keys + kBlockSize - 1) / kBlockSize;
    const size_t cacheFloats = size_t(blocks) * kBlockSize * kKvHeads * kHeadDim;
    const std::vector<float> k = randomFloats(cacheFloats, 21, 1.0f), v = randomFloats(cacheFloats, 22, 1.0f),
                             q = randomFloats(size_t(n) * kHeads * kHeadDim, 23, 1.0f);
    std::vector<int32_t> table(static_cast<size_t>(blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(5));
    std::vector<float> out(q.size());
    const PagedKv kv{k.data(), v.data(), kBlockSize, kKvHeads, kHeadDim, PagedKv::KeyLayout::Tiles};
    double pairs = 0;  // (query, key) pairs under the causal mask
    for (int i = 0; i < n; ++i) pairs += context + i + 1;
    for (CpuIsa isa : isas) {
        const CpuVectorOps& ops = CpuVectorOps::forIsa(isa);
        const double sec =
            bestSeconds(repeats, [&] { pagedAttentionFast(q.data(), out.data(), n, kHeads, context, table, kv, ops, pool); });
        std::printf("attention %d tokens over %d cached, %-11s %8.3f ms %7.1f GFLOP/s\n", n, context, cpuIsaName(isa),
                    sec * 1e3, 4.0 * kHeadDim * kHeads * pairs / sec / 1e9);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app("CPU kernel timings at ERNIE-4.5-0.3B's shapes");
    int repeats = 5, threads = 1;
    std::vector<int> tokens = {1, 8, 128};
    std::string isaName;
    bool skipHead = false, samplerOnly = false, bandwidthOnly = false, peakOnly = false, coldInt8 = false;
    int coldLayers = 0, attentionTokens = 0, context = 0;
    app.add_option("--repeats", repeats, "timed runs; the best is printed");
    app.add_option("--isa", isaName, "only this path: scalar, avx2, avx512, avx512bf16");
    app.add_option("--tokens", tokens, "token counts T of each matmul")->capture_default_str();
    app.add_option("--threads", threads, "the backend's thread pool of this size (1: the calling thread only)")
        ->capture_default_str();
    app.add_flag("--skip-head", skipHead, "leave out the 103,424 x 1,024 lm head");
    app.add_flag("--sampler-only", samplerOnly, "time the sampler only (for perf record)");
    app.add_flag("--read-bandwidth", bandwidthOnly,
                 "only the host's memory read rate: 1 GiB on huge pages, --threads threads, --repeats rounds");
    app.add_flag("--compute-peak", peakOnly,
                 "only the host's vdpbf16ps rate (bf16 GFLOP/s): --threads threads, --repeats rounds");
    app.add_option("--cold-layers", coldLayers,
                   "only the decode step's Linears over this many layers' own weights and the head (from "
                   "memory), --tokens and software prefetch on / off alternating, and for bf16 the same blocks "
                   "read with no arithmetic (the floor), --repeats rounds");
    app.add_flag("--int8", coldInt8, "with --cold-layers: int8 weights (RTN, groups of 128) instead of bf16");
    app.add_option("--attention", attentionTokens, "only attention: a prompt of this many tokens on each path");
    app.add_option("--context", context, "tokens cached before --attention's prompt")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    std::vector<CpuIsa> isas = supportedCpuIsas();
    if (!isaName.empty()) isas = {resolveCpuIsa(isaName.c_str(), detectCpuIsa())};
    std::printf("cpu: best path %s\n", cpuIsaName(detectCpuIsa()));

    std::unique_ptr<CpuThreadPool> pool = threads > 1 ? std::make_unique<CpuThreadPool>(threads) : nullptr;
    if (bandwidthOnly) {
        readBandwidth(repeats, pool.get());
        return 0;
    }
    if (peakOnly) {
        computePeak(repeats, pool.get());
        return 0;
    }
    if (attentionTokens > 0) {
        attentionSweep(attentionTokens, context, isas, repeats, pool.get());
        return 0;
    }
    if (coldLayers > 0) {
        coldSweep(coldLayers, tokens, repeats, isaName.empty() ? detectCpuIsa() : isas.front(), pool.get(), coldInt8);
        return 0;
    }
    std::vector<Shape> shapes;
    if (!samplerOnly) shapes = {{"qkv", 2560, 1024}, {"o", 1024, 2048}, {"gate_up", 6144, 1024}, {"down", 1024, 3072}};
    if (!skipHead && !samplerOnly) shapes.push_back({"lm_head", 103424, 1024});
    for (const Shape& s : shapes) {
        const std::vector<float> values = randomFloats(size_t(s.N) * s.K, 7, 0.05f);
        const CpuMatrix bf16 = CpuMatrix::fromBf16(s.N, s.K, [&](int n, uint16_t* row) {
            for (int k = 0; k < s.K; ++k) row[k] = floatToBf16(values[size_t(n) * s.K + k]);
        });
        auto q = quantizeRtn(values, s.N, s.K, 8, 128);
        const CpuMatrix int8 = CpuMatrix::fromQ8(*q);
        for (int T : tokens) {
            const std::vector<float> x = randomFloats(size_t(T) * s.K, 9, 1.0f);
            std::vector<float> out(size_t(T) * s.N);
            for (const CpuMatrix* w : {&bf16, &int8}) {
                for (CpuIsa isa : isas) {
                    if (isa == CpuIsa::Scalar && (T > 8 || s.N > 10000)) continue;  // minutes, not news
                    const double sec =
                        bestSeconds(repeats, [&] { matmul(*w, x.data(), out.data(), T, isa, pool.get()); });
                    std::printf("matmul %-8s %-5s T=%-4d %-11s %9.3f ms %7.1f GB/s %7.1f GFLOP/s\n", s.name,
                                matrixFormatName(w->format()), T, cpuIsaName(isa), sec * 1e3, w->bytes() / sec / 1e9,
                                2.0 * T * s.N * s.K / sec / 1e9);
                }
            }
        }
    }

    // The sampler: one row of ERNIE's vocabulary, as a chat request samples it.
    {
        const int V = 103424;
        const std::vector<float> logits = randomFloats(size_t(V), 11, 3.0f);
        SamplingParams params;
        params.temperature = 0.8f;
        params.topP = 0.8f;
        SamplingContext context;
        context.params = &params;
        context.seed = 42;
        std::vector<float> row;
        const double sec = bestSeconds(repeats * 4, [&] {
            row = logits;
            Sampler::sample(row, context);
        });
        std::printf("sampler V=%d temperature 0.8 top-p 0.8: %.3f ms per row\n", V, sec * 1e3);
        if (pool) {  // as the backend samples one row: its pool takes slices of the row's passes
            const SamplerThreads split{pool->threads(),
                                       [&](int parts, const std::function<void(int)>& fn) { pool->run(parts, fn); }};
            const double splitSec = bestSeconds(repeats * 4, [&] {
                row = logits;
                Sampler::sample(row, context, split);
            });
            std::printf("sampler V=%d temperature 0.8 top-p 0.8, row split over %d threads: %.3f ms per row\n", V,
                        pool->threads(), splitSec * 1e3);
        }
    }

    // Element-wise ops of one layer at T = 128 (prefill) on each path.
    for (CpuIsa isa : samplerOnly ? std::vector<CpuIsa>{} : isas) {
        const CpuVectorOps& ops = CpuVectorOps::forIsa(isa);
        const int T = 128, H = 1024, I = 3072;
        const std::vector<float> x = randomFloats(size_t(T) * 2 * I, 13, 1.0f),
                                 weight = randomFloats(size_t(H), 17, 1.0f);
        std::vector<float> out(size_t(T) * I);
        const double norm =
            bestSeconds(repeats, [&] { ops.rmsnorm(x.data(), weight.data(), out.data(), T, H, 1e-5f); });
        const double silu = bestSeconds(repeats, [&] { ops.siluMul(x.data(), out.data(), T, I); });
        std::printf("ops %-11s T=128: rmsnorm %.3f ms, silu*up %.3f ms\n", cpuIsaName(isa), norm * 1e3, silu * 1e3);
    }
    return 0;
}
