// structured_mask_bench: the host cost of structured outputs per generated token at ERNIE's
// vocabulary size (103,424 tokens), without a model: a synthetic vocabulary shaped like ERNIE's
// (CJK pieces, "▁word" pieces, punctuation, digits, the 256 byte pieces) and random walks through
// a schema's grammar, each step filling the token mask (cached per parser state, or computed by
// the trie walk), applying it to a logits row as the CPU sampler does, and advancing over a
// random allowed token. The test tokenizer of --random-weights models has ~1,200 pieces, so
// brook-bench throughput --json-schema cannot show this part of the cost at full size.
//
// --rows N models the engine at batch N instead: N walks of one schema in lockstep, each step
// filling every row's mask and then advancing every row over its pick, as the engine loop does
// between two GPU steps; it reports the engine thread's time per step done row by row (serial)
// and spread over a RowPool (parallel), and checks that both give the same masks. --pieces
// keeps only that many pieces of the 103,424 ids (the test tokenizer of the H200 runs has ~1,200).
//
//   structured_mask_bench [--schema FILE] [--steps N] [--walks N]
//   structured_mask_bench --rows 64 [--steps N] [--threads N] [--pieces N] [--schema FILE]
#include "engine/structured/grammar_automaton.h"
#include "engine/structured/grammar_matcher.h"
#include "engine/structured/json_schema_compiler.h"
#include "engine/structured/row_pool.h"
#include "engine/structured/token_bitmask.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <set>

using namespace brook;
using namespace brook::structured;
using BenchClock = std::chrono::steady_clock;

namespace {

constexpr int kErnieVocab = 103424;

std::string utf8(uint32_t c)
{
    std::string s;
    if (c < 0x80) s += char(c);
    else if (c < 0x800) {
        s += char(0xC0 | (c >> 6));
        s += char(0x80 | (c & 0x3F));
    } else {
        s += char(0xE0 | (c >> 12));
        s += char(0x80 | ((c >> 6) & 0x3F));
        s += char(0x80 | (c & 0x3F));
    }
    return s;
}

// 103,424 distinct pieces: byte pieces, then about half CJK (1-3 characters), a third Latin words
// (half with a leading space, as sentencepiece's "▁"), and the rest punctuation, digits and mixes.
std::shared_ptr<const TokenVocabulary> ernieLikeVocabulary(uint32_t seed, int pieces = kErnieVocab)
{
    std::mt19937 rng(seed);
    std::set<std::string> seen;
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, char(b)));
    const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const std::string punctuation = "{}[]\":,.-_!?;()'/@#$%&*+=<>";
    while (int(tokens.size()) < kErnieVocab) {
        std::string t;
        const int kind = int(rng() % 100);
        if (kind < 50) {
            for (int n = 1 + int(rng() % 3); n > 0; --n) t += utf8(0x4E00 + rng() % 20902);
        } else if (kind < 83) {
            if (rng() % 2) t += ' ';
            for (int n = 2 + int(rng() % 8); n > 0; --n) t += letters[rng() % letters.size()];
        } else if (kind < 93) {
            for (int n = 1 + int(rng() % 3); n > 0; --n) t += punctuation[rng() % punctuation.size()];
        } else {
            for (int n = 1 + int(rng() % 4); n > 0; --n) t += char('0' + rng() % 10);
        }
        if (seen.insert(t).second) tokens.push_back(t);
    }
    // Ids past `pieces` keep no bytes: never allowed, as ids past a small tokenizer's end.
    for (size_t id = size_t(std::max(pieces, 256)); id < tokens.size(); ++id) tokens[id].clear();
    return std::make_shared<const TokenVocabulary>(std::move(tokens), std::vector<int32_t>{});
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[size_t(p * double(v.size() - 1))];
}

double mean(const std::vector<double>& v)
{
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0 : sum / double(v.size());
}

uint64_t maskHash(std::span<const uint32_t> mask)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t w : mask) h = (h ^ w) * 1099511628211ull;
    return h;
}

// The k-th allowed token of `mask` (k < its population).
int32_t nthAllowed(std::span<const uint32_t> mask, size_t k)
{
    for (size_t w = 0; w < mask.size(); ++w) {
        const auto count = size_t(std::popcount(mask[w]));
        if (k >= count) {
            k -= count;
            continue;
        }
        uint32_t bits = mask[w];
        for (; k > 0; --k) bits &= bits - 1;
        return int32_t(w * 32 + size_t(std::countr_zero(bits)));
    }
    return -1;
}

struct RowsResult {
    std::vector<double> fillMs, advanceMs;  // per step, on the engine thread
    std::vector<double> modeledMs;          // serial run: per step, rows' measured times list-scheduled on threads
    std::vector<uint64_t> hashes;           // every row's mask, step by step
    GrammarAutomaton::Stats stats;
    int rowSteps = 0;
};

// `rows` walks of one schema in lockstep, as the engine's step: maybeReset, every row's mask,
// (sampling: untimed), every row's advance. pool == nullptr: row by row on this thread.
RowsResult runRows(const std::shared_ptr<const Grammar>& grammar,
                   const std::shared_ptr<const TokenVocabulary>& vocabulary, int rows, int steps, RowPool* pool,
                   int modelThreads)
{
    RowsResult result;
    auto automaton = std::make_shared<GrammarAutomaton>(grammar, vocabulary);
    const int eos = 2;
    std::vector<std::unique_ptr<GrammarMatcher>> matchers;
    std::vector<std::mt19937> rngs;
    for (int r = 0; r < rows; ++r) {
        matchers.push_back(std::make_unique<GrammarMatcher>(automaton, std::vector<int32_t>{eos}));
        rngs.emplace_back(uint32_t(1000 + r));
    }
    const size_t words = size_t(vocabulary->maskWords());
    std::vector<std::vector<uint32_t>> scratch(static_cast<size_t>(rows), std::vector<uint32_t>(words));
    std::vector<std::span<const uint32_t>> masks(static_cast<size_t>(rows));
    std::vector<int32_t> picks(static_cast<size_t>(rows));
    std::vector<int> live;
    std::vector<double> rowMs;  // serial run: each row's time in the current phase
    const std::function<void(size_t)> fill = [&](size_t i) {
        const auto r = size_t(live[i]);
        const auto start = pool ? BenchClock::time_point() : BenchClock::now();
        masks[r] = matchers[r]->mask(scratch[r]);
        if (!pool) rowMs[i] = std::chrono::duration<double, std::milli>(BenchClock::now() - start).count();
    };
    const std::function<void(size_t)> advance = [&](size_t i) {
        const auto r = size_t(live[i]);
        const auto start = pool ? BenchClock::time_point() : BenchClock::now();
        if (picks[r] >= 0) matchers[r]->accept(picks[r]);
        if (!pool) rowMs[i] = std::chrono::duration<double, std::milli>(BenchClock::now() - start).count();
    };
    std::vector<int> slow;  // parallel run: the rows left for the pool
    const std::function<void(size_t)> fillSlow = [&](size_t i) {
        const auto r = size_t(slow[i]);
        masks[r] = matchers[r]->mask(scratch[r]);
    };
    const std::function<void(size_t)> advanceSlow = [&](size_t i) {
        const auto r = size_t(slow[i]);
        matchers[r]->accept(picks[r]);
    };
    // The pool's schedule (each row to the first free thread, in order) over the serial run's
    // row times: what `modelThreads` threads would take if rows never waited on each other.
    const auto makespan = [&] {
        std::vector<double> busy(size_t(std::max(modelThreads, 1)), 0.0);
        for (double t : rowMs) *std::min_element(busy.begin(), busy.end()) += t;
        return *std::max_element(busy.begin(), busy.end());
    };
    for (int s = 0; s < steps; ++s) {
        live.clear();
        for (int r = 0; r < rows; ++r)
            if (!matchers[size_t(r)]->terminated()) live.push_back(r);
        if (live.empty()) break;
        rowMs.assign(live.size(), 0.0);
        auto t0 = BenchClock::now();
        automaton->maybeReset();
        if (pool) {
            // As the engine: cached masks taken on this thread, the rest on the pool.
            slow.clear();
            for (int r : live)
                if (masks[size_t(r)] = matchers[size_t(r)]->cachedMask(); masks[size_t(r)].empty()) slow.push_back(r);
            pool->run(slow.size(), fillSlow);
        } else {
            for (size_t i = 0; i < live.size(); ++i) fill(i);
        }
        auto t1 = BenchClock::now();
        const double fillModel = makespan();
        for (int r : live) {
            const std::span<const uint32_t> m = masks[size_t(r)];
            result.hashes.push_back(maskHash(m));
            size_t allowed = 0;
            for (uint32_t w : m) allowed += size_t(std::popcount(w));
            picks[size_t(r)] = allowed ? nthAllowed(m, rngs[size_t(r)]() % allowed) : -1;
            if (picks[size_t(r)] == eos) picks[size_t(r)] = -1;  // the walk ends here; keep it going
        }
        auto t2 = BenchClock::now();
        if (pool) {
            slow.clear();
            for (int r : live)
                if (picks[size_t(r)] >= 0 && !matchers[size_t(r)]->tryAcceptCached(picks[size_t(r)])) slow.push_back(r);
            pool->run(slow.size(), advanceSlow);
        } else {
            for (size_t i = 0; i < live.size(); ++i) advance(i);
        }
        auto t3 = BenchClock::now();
        if (!pool) result.modeledMs.push_back(fillModel + makespan());
        result.rowSteps += int(live.size());
        result.fillMs.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        result.advanceMs.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
    }
    result.stats = automaton->stats();
    return result;
}

void printRows(const char* label, const RowsResult& r, int modelThreads)
{
    std::vector<double> total(r.fillMs.size());
    for (size_t i = 0; i < total.size(); ++i) total[i] = r.fillMs[i] + r.advanceMs[i];
    std::cout << label << ": engine thread per step, ms: mean " << mean(total) << " (p50 " << percentile(total, 0.5)
              << ", p99 " << percentile(total, 0.99) << ", max " << percentile(total, 1.0) << "); masks mean "
              << mean(r.fillMs) << ", advances mean " << mean(r.advanceMs) << "; " << r.fillMs.size() << " steps, "
              << r.rowSteps << " row-steps; masks computed " << r.stats.masksComputed << ", from the cache "
              << r.stats.maskHits << ", splits " << r.stats.splitsComputed << "\n";
    if (!r.modeledMs.empty())
        std::cout << "  its row times on " << modelThreads << " threads (modeled: no wake-ups, no lock waits): mean "
                  << mean(r.modeledMs) << " ms per step (p50 " << percentile(r.modeledMs, 0.5) << ", p99 "
                  << percentile(r.modeledMs, 0.99) << ")\n";
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"structured_mask_bench: structured-output host cost per token at ERNIE's vocabulary size"};
    std::string schemaFile;
    int steps = 300, walks = 8, rows = 0, threads = 0, pieces = kErnieVocab;
    app.add_option("--schema", schemaFile, "JSON schema file (default: bench/structured/people_schema.json's shape)");
    app.add_option("--steps", steps, "tokens per walk")->capture_default_str();
    app.add_option("--walks", walks, "independent walks (requests) sharing one automaton")->capture_default_str();
    app.add_option("--rows", rows, "rows of one schema per step, serial against parallel (0: the per-token walks)");
    app.add_option("--threads", threads, "--rows: threads of the parallel run including the caller (0: as the engine)");
    app.add_option("--pieces", pieces, "pieces with bytes among the 103,424 ids")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    std::string schema =
        R"({"type":"array","minItems":100,"items":{"type":"object","properties":{"name":{"type":"string","maxLength":12},)"
        R"("age":{"type":"integer","minimum":0,"maximum":120},"email":{"type":"string","format":"email"},)"
        R"("tags":{"type":"array","items":{"enum":["admin","user","guest"]},"maxItems":3},"score":{"type":"number"},)"
        R"("active":{"type":"boolean"}},"required":["name","age","tags","score","active"],"additionalProperties":false}})";
    if (!schemaFile.empty()) {
        std::ifstream in(schemaFile, std::ios::binary);
        schema.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto vocabularyStart = BenchClock::now();
    auto vocabulary = ernieLikeVocabulary(1, pieces);
    const double vocabularySeconds = std::chrono::duration<double>(BenchClock::now() - vocabularyStart).count();
    const auto compileStart = BenchClock::now();
    auto grammar = compileJsonSchema(schema, "--schema");
    if (!grammar) {
        std::cerr << grammar.error() << "\n";
        return 2;
    }
    const double compileSeconds = std::chrono::duration<double>(BenchClock::now() - compileStart).count();
    if (rows > 0) {
        std::cout << "vocabulary: " << vocabulary->vocabSize() << " ids, " << vocabulary->sorted().size()
                  << " with bytes (synthetic, ERNIE-sized); " << rows << " rows of one schema, up to " << steps
                  << " steps\n";
        const int modelThreads = threads > 0 ? threads : RowPool::defaultThreads();
        const RowsResult serial = runRows(*grammar, vocabulary, rows, steps, nullptr, modelThreads);
        printRows("serial (row by row)", serial, modelThreads);
        RowPool pool(threads);
        const RowsResult parallel = runRows(*grammar, vocabulary, rows, steps, &pool, modelThreads);
        std::cout << "(" << pool.threads() << " threads) ";
        printRows("parallel", parallel, modelThreads);
        if (parallel.hashes != serial.hashes) {
            std::cerr << "parallel masks differ from the serial ones\n";
            return 1;
        }
        std::cout << "parallel masks identical to serial: " << serial.hashes.size() << " masks\n";
        return 0;
    }
    auto automaton = std::make_shared<GrammarAutomaton>(*grammar, vocabulary);

    std::mt19937 rng(7);
    std::vector<uint32_t> mask(size_t(vocabulary->maskWords()));
    std::vector<float> logits(kErnieVocab);
    std::vector<double> fillMs, applyMs, acceptMs;
    const int eos = 2;
    for (int w = 0; w < walks; ++w) {
        GrammarMatcher matcher(automaton, {eos});
        for (int s = 0; s < steps && !matcher.terminated(); ++s) {
            auto t0 = BenchClock::now();
            if (!matcher.fillMask(mask)) break;
            auto t1 = BenchClock::now();
            std::fill(logits.begin(), logits.end(), 0.5f);
            auto t2 = BenchClock::now();
            applyTokenBitmask(logits, mask);
            auto t3 = BenchClock::now();
            std::vector<int32_t> allowed;
            for (int32_t t = 0; t < kErnieVocab; ++t)
                if (std::isfinite(logits[size_t(t)]) && t != eos) allowed.push_back(t);
            if (allowed.empty()) break;
            const int32_t pick = allowed[rng() % allowed.size()];
            auto t4 = BenchClock::now();
            matcher.accept(pick);
            auto t5 = BenchClock::now();
            fillMs.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            applyMs.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
            acceptMs.push_back(std::chrono::duration<double, std::milli>(t5 - t4).count());
        }
    }
    double fill = 0, apply = 0, accept = 0;
    for (size_t i = 0; i < fillMs.size(); ++i) {
        fill += fillMs[i];
        apply += applyMs[i];
        accept += acceptMs[i];
    }
    const double n = double(std::max<size_t>(fillMs.size(), 1));
    const GrammarAutomaton::Stats stats = automaton->stats();
    std::cout << "vocabulary: " << vocabulary->vocabSize() << " tokens (synthetic, ERNIE-sized), built in "
              << vocabularySeconds * 1e3 << " ms\n"
              << "schema compiled in " << compileSeconds * 1e3 << " ms; parser states " << stats.states
              << ", stack nodes " << stats.nodes << "\n"
              << "tokens: " << fillMs.size() << " over " << walks << " walks; masks computed " << stats.masksComputed
              << ", from the cache " << stats.maskHits << "; splits computed " << stats.splitsComputed << "\n"
              << "per token, ms: fill mask mean " << fill / n << " (p50 " << percentile(fillMs, 0.5) << ", p99 "
              << percentile(fillMs, 0.99) << ", max " << percentile(fillMs, 1.0) << "), apply mask mean " << apply / n
              << ", advance mean " << accept / n << "\n"
              << "host cost per constrained token, mean ms: " << (fill + apply + accept) / n << "\n";
    return 0;
}
