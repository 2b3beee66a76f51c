// brook-step-bench: where a decode step's time goes on the GPU, below the engine. For each batch
// size it prefills that many sequences to --context tokens, then times
//   forward: the decode forward alone on the GPU (graph replay; CUDA events, no sampling),
//   step:    Backend::step as the engine calls it (inputs upload + forward + GPU sampling +
//            results back), wall clock;
// the difference is the per-step host and sampling cost, and brook-bench latency minus `step`
// is the engine's own per-token work. With --profile-step one decode step runs between
// cudaProfilerStart/Stop, for `ncu --profile-from-start off --graph-profiling node`.
// --prefill LENS times prefill steps of one sequence of each length the same way (as the engine
// runs them: from a prefill graph up to 256 tokens, eagerly beyond), and --profile-prefill puts
// the first one under cudaProfilerStart/Stop: the sum of its kernel times against `forward` says
// how much of a prefill is launch latency.
// --prefill-context N puts N cached tokens before each of those prompts: the step a prefix-cache
// hit leaves (a chat's last turn computed over its cached history). The `cold_step_us` column is
// that step after 256 MB of writes have evicted the GPU's L2 (median of the iterations / 10 runs):
// as a chat turn meets it, its history's K/V and the weights in HBM, not left in L2 by the step
// before.
// --masked gives every decode row a structured-output token mask (one shared mask, or one per row
// with --distinct-masks), so `step` shows what masking costs on the GPU.
#include "cuda/cuda_backend.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "engine/model_folder.h"
#include "testing/test_model_writer.h"

#include <CLI/CLI.hpp>
#include <cuda_profiler_api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <unistd.h>

using namespace brook;

namespace {

struct Sequences {
    std::vector<std::vector<int32_t>> prompts, tables;
    std::vector<int32_t> next;  // the one decode token of each
};

// Block tables that give sequence s the blocks [s * perSeq, (s + 1) * perSeq).
Sequences makeSequences(int count, int context, int extra, int blockSize, int vocab)
{
    Sequences q;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int32_t> token(3, vocab - 1);
    const int perSeq = (context + extra + blockSize - 1) / blockSize;
    for (int s = 0; s < count; ++s) {
        q.prompts.emplace_back(size_t(context));
        for (auto& t : q.prompts.back()) t = token(rng);
        q.tables.emplace_back();
        for (int b = 0; b < perSeq; ++b) q.tables.back().push_back(s * perSeq + b);
        q.next.push_back(token(rng));
    }
    return q;
}

// Structured-output masks as a JSON grammar gives them: a few hundred allowed ids scattered over
// the vocabulary (each mask its own pattern).
std::vector<std::vector<uint32_t>> makeMasks(int count, int words, int vocab)
{
    std::vector<std::vector<uint32_t>> masks(size_t(count), std::vector<uint32_t>(size_t(words), 0u));
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> id(0, vocab - 1);
    for (auto& m : masks)
        for (int i = 0; i < 400; ++i) {
            const int t = id(rng);
            m[size_t(t / 32)] |= 1u << (t % 32);
        }
    return masks;
}

// One sequence of each length prefilled from position `cached` (its KV slots rewritten each time;
// the `cached` tokens before them written once, untimed): forward (CUDA events over `iterations`
// eager forwards) and step (wall clock, with sampling).
void timePrefills(cuda::CudaBackend& backend, const std::vector<int>& lens, int cached, int iterations, bool profile,
                  int vocab)
{
    std::printf("prompt  cached  first_step_us  forward_us  step_us  prompt_tok/s(step)  cold_step_us\n");
    cuda::DeviceBuffer evictL2(size_t(256) << 20);  // 5x the H200's 50 MB L2
    bool profiled = false;
    for (int len : lens) {
        Sequences seqs = makeSequences(1, cached + len, 1, backend.blockSize(), vocab);
        const std::span<const int32_t> all = seqs.prompts[0];
        if (cached > 0) {
            BatchSequence history{all.first(size_t(cached)), 0, seqs.tables[0], false, {}};
            backend.step(std::span(&history, 1));
        }
        BatchSequence b{all.subspan(size_t(cached)), cached, seqs.tables[0], true, {}};
        // The first step of a length the backend has not seen: what a server's new prompt costs.
        const auto first = std::chrono::steady_clock::now();
        backend.step(std::span(&b, 1));
        const double firstUs =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - first).count();
        for (int i = 0; i < 2; ++i) backend.step(std::span(&b, 1));
        if (profile && !profiled) {
            cudaProfilerStart();
            backend.step(std::span(&b, 1));
            cudaProfilerStop();
            profiled = true;
        }
        const double forwardUs = backend.timeForward(std::span(&b, 1), iterations);
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) backend.step(std::span(&b, 1));
        const double stepUs =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / iterations;
        std::vector<double> cold;
        for (int i = 0; i < std::max(iterations / 10, 5); ++i) {
            BROOK_CUDA_CHECK(cudaMemset(evictL2.get(), i & 0xFF, evictL2.bytes()));
            BROOK_CUDA_CHECK(cudaDeviceSynchronize());
            const auto coldStart = std::chrono::steady_clock::now();
            backend.step(std::span(&b, 1));
            cold.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - coldStart).count());
        }
        std::nth_element(cold.begin(), cold.begin() + long(cold.size() / 2), cold.end());
        std::printf("%6d  %6d  %13.1f  %10.1f  %7.1f  %18.0f  %12.1f\n", len, cached, firstUs, forwardUs, stepUs,
                    len * 1e6 / stepUs, cold[cold.size() / 2]);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"brook-step-bench: GPU time of one decode step, below the engine"};
    std::filesystem::path modelDir;
    std::vector<int> batches = {1, 8, 64, 128, 256};
    int context = 256, iterations = 200, prefillContext = 0;
    bool profileStep = false, eager = false;
    std::vector<int> prefillLens;
    bool profilePrefill = false, masked = false, distinctMasks = false;
    app.add_option("--model,-m", modelDir, "model folder (default: random ERNIE-0.3B weights)");
    app.add_option("--batch", batches, "batch sizes")->capture_default_str();
    app.add_option("--context", context, "tokens cached per sequence before the timed steps")->capture_default_str();
    app.add_option("--iterations", iterations)->capture_default_str();
    app.add_flag("--profile-step", profileStep, "profile one decode step of the first batch size (ncu)");
    app.add_flag("--enforce-eager", eager, "no CUDA graphs");
    app.add_option("--prefill", prefillLens, "prompt lengths: time one prefill step of each (no decode then)");
    app.add_option("--prefill-context", prefillContext, "with --prefill: tokens cached before each prompt")
        ->check(CLI::Range(0, 4000));
    app.add_flag("--profile-prefill", profilePrefill, "profile one prefill step of the first length (ncu)");
    app.add_flag("--masked", masked, "decode rows carry a token mask (structured output)");
    app.add_flag("--distinct-masks", distinctMasks, "with --masked: every row its own mask");
    // The backend's kernel features (cuda_features.h), for A/B runs.
    cuda::CudaFeatures features;
    bool noPdl = false, noClusters = false;
    app.add_flag("--no-pdl", noPdl, "no programmatic dependent launch");
    app.add_flag(
        "--no-clusters", noClusters,
        "attention (decode, split prefill) merges through the workspace, not clusters; the sampler uses one CTA a row");
    app.add_option("--pdl-early-wait", features.pdlEarlyWaitMask,
                   "kernels wait before their early work: 1 attention, 2 GEMVs, 4 the GEMV's RoPE inputs only")
        ->check(CLI::Range(0, 7));
    bool noGemmRowPadding = false, noSplitKvPrefill = false;
    app.add_flag("--no-split-kv-prefill", noSplitKvPrefill, "prefill attention: one CTA per query tile, never split");
    bool noPrefillGraphs = false, noPdlPrefill = false;
    app.add_flag("--no-pdl-prefill", noPdlPrefill,
                 "RoPE + cache write, SiLU*up and prefill attention launch without PDL (the rest keep it)");
    app.add_flag("--no-prefill-graphs", noPrefillGraphs, "single-sequence prefill steps launch kernel by kernel");
    bool noFusedGemm = false;
    app.add_flag("--no-fused-gemm", noFusedGemm,
                 "steps of 5..32 tokens run cuBLASLt and the standalone RoPE / SiLU*up kernels, not the fused GEMM");
    app.add_flag("--no-gemm-row-padding", noGemmRowPadding, "cuBLASLt plans every distinct row count (a new length)");
    app.add_option("--sampler-cluster", features.samplerClusterSize,
                   "CTAs that sample one row: 0 chosen by batch, 1 one CTA a row, 2..8 forced")
        ->check(CLI::Range(0, 8));
    app.add_option("--skinny-max-rows", features.skinnyMaxRows,
                   "decode steps of up to this many tokens take the skinny GEMM (0: built-in crossover)")
        ->check(CLI::Range(0, 8));
    CLI11_PARSE(app, argc, argv);
    features.programmaticDependentLaunch = !noPdl;
    features.threadBlockClusters = !noClusters;
    features.padGemmRows = !noGemmRowPadding;
    features.splitKvPrefill = !noSplitKvPrefill;
    features.prefillGraphs = !noPrefillGraphs;
    features.pdlPrefillKernels = !noPdlPrefill;
    features.fusedGemm = !noFusedGemm;
    spdlog::set_level(spdlog::level::warn);

    std::filesystem::path temp;
    if (modelDir.empty()) {
        temp = std::filesystem::temp_directory_path() / ("brook-step-bench-" + std::to_string(::getpid()));
        testing::TestModelOptions model;
        model.shape = testing::TestModelShape::ernie03b();
        if (auto written = testing::writeTestModel(temp, model); !written) {
            spdlog::error("{}", written.error());
            return 1;
        }
        modelDir = temp;
    }
    auto folder = ModelFolder::load(modelDir);
    if (!folder) {
        spdlog::error("{}", folder.error());
        return 1;
    }
    int maxBatch = 1;
    for (int b : batches) maxBatch = std::max(maxBatch, b);
    cuda::CudaBackendOptions options;
    options.maxModelLen = 4096;
    options.maxNumSeqs = maxBatch;
    options.enforceEager = eager;
    options.gpuMemoryUtilization = 0.5;
    options.features = features;
    auto backend = cuda::CudaBackend::create(folder->config, *folder->checkpoint, options);
    if (!backend) {
        spdlog::error("{}", backend.error());
        return 1;
    }
    const int vocab = folder->config.vocabSize;
    if (!prefillLens.empty()) {
        timePrefills(**backend, prefillLens, prefillContext, iterations, profilePrefill, vocab);
        backend->reset();
        if (!temp.empty()) std::filesystem::remove_all(temp);
        return 0;
    }
    const int maskWords = (vocab + 31) / 32;
    std::printf("batch  context  forward_us  step_us  host_and_sampling_us  tok/s(step)%s\n",
                masked ? (distinctMasks ? "  [distinct masks]" : "  [one shared mask]") : "");
    bool profiled = false;
    for (int batchSize : batches) {
        Sequences seqs = makeSequences(batchSize, context, iterations + 2, (*backend)->blockSize(), vocab);
        for (int s = 0; s < batchSize; ++s) {  // prefill one at a time
            BatchSequence b{seqs.prompts[s], 0, seqs.tables[s], true, {}};
            (*backend)->step(std::span(&b, 1));
        }
        std::vector<std::vector<uint32_t>> masks;
        if (masked) masks = makeMasks(distinctMasks ? batchSize : 1, maskWords, vocab);
        std::vector<BatchSequence> decode;
        for (int s = 0; s < batchSize; ++s) {
            decode.push_back({std::span(&seqs.next[s], 1), context, seqs.tables[s], true, {}});
            if (masked) decode.back().sampling.allowedTokens = masks[distinctMasks ? size_t(s) : 0];
        }
        for (int i = 0; i < 3; ++i) (*backend)->step(decode);  // warm-up (same position: rewrites one slot)
        if (profileStep && !profiled) {
            cudaProfilerStart();
            (*backend)->step(decode);
            cudaProfilerStop();
            profiled = true;
        }
        const double forwardUs = (*backend)->timeForward(decode, iterations);
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i) {
            for (auto& b : decode) b.startPosition = context + i;  // a growing context, as in real decode
            (*backend)->step(decode);
        }
        const double stepUs =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / iterations;
        std::printf("%5d  %7d  %10.1f  %7.1f  %20.1f  %11.0f\n", batchSize, context, forwardUs, stepUs,
                    stepUs - forwardUs, batchSize * 1e6 / stepUs);
    }
    backend->reset();
    if (!temp.empty()) std::filesystem::remove_all(temp);
    return 0;
}
