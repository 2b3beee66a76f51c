// structured_mask_bench: the host cost of structured outputs per generated token at ERNIE's
// vocabulary size (103,424 tokens), without a model: a synthetic vocabulary shaped like ERNIE's
// (CJK pieces, "▁word" pieces, punctuation, digits, the 256 byte pieces) and random walks through
// a schema's grammar, each step filling the token mask (cached per parser state, or computed by
// the trie walk), applying it to a logits row as the CPU sampler does, and advancing over a
// random allowed token. The test tokenizer of --random-weights models has ~1,200 pieces, so
// brook-bench throughput --json-schema cannot show this part of the cost at full size.
//
//   structured_mask_bench [--schema FILE] [--steps N] [--walks N]
#include "engine/structured/grammar_automaton.h"
#include "engine/structured/grammar_matcher.h"
#include "engine/structured/json_schema_compiler.h"
#include "engine/structured/token_bitmask.h"

#include <CLI/CLI.hpp>

#include <algorithm>
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
std::shared_ptr<const TokenVocabulary> ernieLikeVocabulary(uint32_t seed)
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
    return std::make_shared<const TokenVocabulary>(std::move(tokens), std::vector<int32_t>{});
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[size_t(p * double(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"structured_mask_bench: structured-output host cost per token at ERNIE's vocabulary size"};
    std::string schemaFile;
    int steps = 300, walks = 8;
    app.add_option("--schema", schemaFile, "JSON schema file (default: bench/structured/people_schema.json's shape)");
    app.add_option("--steps", steps, "tokens per walk")->capture_default_str();
    app.add_option("--walks", walks, "independent walks (requests) sharing one automaton")->capture_default_str();
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
    auto vocabulary = ernieLikeVocabulary(1);
    const double vocabularySeconds = std::chrono::duration<double>(BenchClock::now() - vocabularyStart).count();
    const auto compileStart = BenchClock::now();
    auto grammar = compileJsonSchema(schema, "--schema");
    if (!grammar) {
        std::cerr << grammar.error() << "\n";
        return 2;
    }
    const double compileSeconds = std::chrono::duration<double>(BenchClock::now() - compileStart).count();
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
              << ", from the cache " << stats.maskHits << "\n"
              << "per token, ms: fill mask mean " << fill / n << " (p50 " << percentile(fillMs, 0.5) << ", p99 "
              << percentile(fillMs, 0.99) << ", max " << percentile(fillMs, 1.0) << "), apply mask mean " << apply / n
              << ", advance mean " << accept / n << "\n"
              << "host cost per constrained token, mean ms: " << (fill + apply + accept) / n << "\n";
    return 0;
}
