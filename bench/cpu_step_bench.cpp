// cpu_step_bench: where the CPU backend's time goes, below the engine. Times one prefill step of
// --prefill-seqs sequences x --prefill-len tokens (the shape of brook-bench throughput's first
// step) and decode steps of each --batch size, best of --repeats, in a process that has already
// run its warm-up pass. Every set of sequences starts at KV block 0, as the engine's block manager
// hands out the blocks the warm-up pass touched first (a prefill writes every slot it reads, so
// reusing blocks changes no result); --fresh-blocks gives each set untouched blocks instead, which
// adds their page faults (about 15 us a 4 KB page here, some 20-30 ms to a 256-token prefill);
// --interleave alternates the batch sizes' decode steps, for ratios on a VM whose memory
// bandwidth moves from minute to minute; --no-warmup shows what the first steps cost without it (page faults of first-touch buffers).
// Run it on an idle machine: every figure is wall time.
#include "engine/cpu/cpu_backend.h"
#include "engine/model_folder.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

using namespace brook;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Sequences with their own blocks from `firstBlock` on, each holding `context` + `extra` tokens.
struct Sequences {
    std::vector<std::vector<int32_t>> tokens, tables;
    int nextBlock = 0;
};

Sequences makeSequences(int count, int length, int capacity, int blockSize, int firstBlock, std::mt19937& rng,
                        int vocab)
{
    Sequences q;
    std::uniform_int_distribution<int32_t> token(3, vocab - 1);
    const int perSeq = (capacity + blockSize - 1) / blockSize;
    q.nextBlock = firstBlock;
    for (int s = 0; s < count; ++s) {
        q.tokens.emplace_back(size_t(length));
        for (auto& t : q.tokens.back()) t = token(rng);
        q.tables.emplace_back();
        for (int b = 0; b < perSeq; ++b) q.tables.back().push_back(q.nextBlock++);
    }
    return q;
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"cpu_step_bench: CPU backend step times (prefill and decode), below the engine"};
    std::filesystem::path modelDir;
    std::vector<int> batches = {1, 8};
    int prefillSeqs = 8, prefillLen = 32, context = 32, repeats = 5, prefillRepeats = -1, warmupTokens = 512,
        threads = 0;
    std::string quantization;
    bool noWarmup = false, freshBlocks = false, interleave = false;
    app.add_option("--model,-m", modelDir, "model folder")->required();
    app.add_option("--prefill-seqs", prefillSeqs, "sequences in the timed prefill step")->capture_default_str();
    app.add_option("--prefill-len", prefillLen, "tokens of each in that step")->capture_default_str();
    app.add_option("--batch", batches, "decode batch sizes")->capture_default_str();
    app.add_option("--context", context, "tokens cached per sequence before a decode step")->capture_default_str();
    app.add_option("--repeats", repeats, "timed repeats; the best is printed")->capture_default_str();
    app.add_option("--prefill-repeats", prefillRepeats, "timed prefill repeats (default: --repeats; 0 skips it)");
    app.add_option("--warmup-tokens", warmupTokens, "the backend's warm-up pass at load")->capture_default_str();
    app.add_flag("--no-warmup", noWarmup, "no warm-up pass, and the first repeat is printed too");
    app.add_flag("--fresh-blocks", freshBlocks, "untouched KV blocks for every set (page faults included)");
    app.add_flag("--interleave", interleave, "decode steps of the batch sizes in turn (same minutes for each)");
    app.add_option("--threads", threads, "worker threads (0: all cores)")->capture_default_str();
    app.add_option("--quantization", quantization, "int8 or int4");
    CLI11_PARSE(app, argc, argv);
    spdlog::set_level(spdlog::level::warn);

    auto folder = ModelFolder::load(modelDir);
    if (!folder) {
        spdlog::error("{}", folder.error());
        return 1;
    }
    cpu::CpuBackendOptions options;
    options.threads = threads;
    options.warmupTokens = noWarmup ? 0 : warmupTokens;
    if (!quantization.empty()) {
        auto spec = resolveQuantization(folder->config, quantization);
        if (!spec) {
            spdlog::error("{}", spec.error());
            return 1;
        }
        options.quantization = *spec;
    }
    const auto loadStart = Clock::now();
    auto backend = cpu::CpuBackend::create(folder->config, *folder->checkpoint, options);
    if (!backend) {
        spdlog::error("{}", backend.error());
        return 1;
    }
    std::printf("cpu path %s, load %.0f ms (warm-up pass of %d tokens included)\n", cpuIsaName((*backend)->isa()),
                msSince(loadStart), options.warmupTokens);
    const int vocab = folder->config.vocabSize, blockSize = (*backend)->blockSize();
    std::mt19937 rng(7);
    const int firstFresh = (options.warmupTokens + blockSize - 1) / blockSize;  // past the warm-up's blocks
    int nextBlock = freshBlocks ? firstFresh : 0;

    if (prefillRepeats < 0) prefillRepeats = repeats;
    double best = 1e30;
    for (int r = 0; r < prefillRepeats; ++r) {
        Sequences q = makeSequences(prefillSeqs, prefillLen, prefillLen, blockSize, nextBlock, rng, vocab);
        if (freshBlocks) nextBlock = q.nextBlock;
        std::vector<BatchSequence> batch;
        for (int s = 0; s < prefillSeqs; ++s) batch.push_back({q.tokens[s], 0, q.tables[s], true, {}});
        const auto start = Clock::now();
        (*backend)->step(batch);
        const double ms = msSince(start);
        if (noWarmup && r == 0) std::printf("prefill %d x %d tokens, first: %.2f ms\n", prefillSeqs, prefillLen, ms);
        best = std::min(best, ms);
    }
    if (prefillRepeats > 0)
        std::printf("prefill %d x %d tokens: %.2f ms (%.0f tokens/s)\n", prefillSeqs, prefillLen, best,
                    prefillSeqs * prefillLen * 1e3 / best);

    // One set of sequences per batch size, prefilled untimed, then `repeats` decode steps each:
    // set after set, or with --interleave one step of each set in turn, so that every batch size
    // sees the same minutes of this VM's swinging memory bandwidth (compare their medians).
    struct DecodeSet {
        int batch = 0;
        Sequences q;
        std::vector<int32_t> next;
        std::vector<double> ms;
    };
    std::vector<DecodeSet> sets;
    for (int batchSize : batches) {
        DecodeSet d;
        d.batch = batchSize;
        d.q = makeSequences(batchSize, context, context + repeats + 1, blockSize, nextBlock, rng, vocab);
        if (freshBlocks || interleave) nextBlock = d.q.nextBlock;  // interleaved sets live side by side
        d.next.assign(size_t(batchSize), 5);
        sets.push_back(std::move(d));
    }
    const auto prefillSet = [&](DecodeSet& d) {
        std::vector<BatchSequence> prefill;
        for (int s = 0; s < d.batch; ++s) prefill.push_back({d.q.tokens[s], 0, d.q.tables[s], true, {}});
        (*backend)->step(prefill);
    };
    const auto decodeStep = [&](DecodeSet& d, int r) {
        std::vector<BatchSequence> decode;
        for (int s = 0; s < d.batch; ++s)
            decode.push_back({std::span(&d.next[s], 1), context + r, d.q.tables[s], true, {}});
        const auto start = Clock::now();
        (*backend)->step(decode);
        d.ms.push_back(msSince(start));
    };
    if (interleave) {
        for (DecodeSet& d : sets) prefillSet(d);
        for (int r = 0; r < repeats; ++r)
            for (DecodeSet& d : sets) decodeStep(d, r);
    } else {
        for (DecodeSet& d : sets) {
            prefillSet(d);
            for (int r = 0; r < repeats; ++r) decodeStep(d, r);
        }
    }
    for (DecodeSet& d : sets) {
        if (d.ms.empty()) continue;
        std::sort(d.ms.begin(), d.ms.end());
        const double best = d.ms.front(), median = d.ms[d.ms.size() / 2];
        std::printf("decode batch %d at context %d: %.2f ms a step (%.1f tokens/s), median %.2f ms\n", d.batch, context,
                    best, d.batch * 1e3 / best, median);
    }
    return 0;
}
