// Whether the weight-streaming kernels that prefetch in software do so: the int8 / int4 VNNI
// kernel of 1-8 tokens (cpu_gemm_q8_avx512.cpp) and the vdpbf16ps kernel of decode batches and
// prompts (cpu_gemm_avx512.cpp), each 4 KB ahead. Chosen at run time because the right answer
// depends on the CPU's memory system rather than on its instruction set, and one binary ships
// for every CPU:
//   - On a Zen 5 EPYC VM, prefetching 4 KB ahead streamed the 106 MB int8 lm head 15-20% faster
//     than the hardware prefetcher alone (2026-12-01).
//   - On a Zen 4 EPYC VM of the same type, the same prefetches made an int8 batch-1 decode step
//     17% slower (15-16 ms against 18-19 ms a step) and bf16 batch-8 Linears 4-5% slower
//     (docs/benchmarks.md, 2026-12-03).
// CpuBackend times both on the model's own lm head at load (calibrateWeightPrefetch) and keeps
// the faster. The setting changes no result: the kernels compute the same bits either way.
// Process-wide, like the ISA override (cpu_features.h): one process drives one backend.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace brook::cpu {

// How far ahead the kernels prefetch when they do.
inline constexpr int kWeightPrefetchBytes = 4096;

// Whether they do (the default: yes).
bool weightPrefetch();
void setWeightPrefetch(bool on);

// The option (0 .. options - 1) whose timings have the lowest median. time(option) is called
// `rounds` times per option, the options alternating within each round, so a slow minute of a
// shared machine weighs on each alike. Ties go to the lower option. medians (optional) gets each
// option's median, in order.
size_t fastestOption(size_t options, int rounds, const std::function<double(size_t)>& time,
                     std::vector<double>* medians = nullptr);

}  // namespace brook::cpu
