// The engine flags every command-line tool shares, spelled as vLLM spells them. Which backend
// honours which is launch/backend_support.h's table; test_backend_support holds the two together.
#pragma once

#include "engine/result.h"
#include "launch/launch_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>

namespace brook {

inline void addLaunchFlags(CLI::App& app, LaunchOptions& o)
{
    app.add_option("--device", o.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--dtype", o.dtype, "auto, bfloat16, float16 or float32")
        ->check(CLI::IsMember({"auto", "bfloat16", "float16", "float32"}));
    app.add_option("--max-model-len", o.maxModelLen, "prompt + output tokens per request (default: the model's)");
    app.add_option("--max-num-seqs", o.maxNumSeqs, "requests batched together at most");
    app.add_option("--max-num-batched-tokens", o.maxNumBatchedTokens, "tokens computed per engine step at most");
    app.add_option("--gpu-memory-utilization", o.gpuMemoryUtilization, "fraction of GPU memory Brook may use")
        ->check(CLI::Range(0.05, 1.0));
    app.add_option("--quantization", o.quantization,
                   "int8 or int4 (quantize the Linears at load), awq (an AWQ checkpoint); CPU dequantizes");
    app.add_option("--block-size", o.blockSize, "tokens per KV-cache block")->check(CLI::IsMember({8, 16, 32}));
    app.add_option("--num-kv-blocks", o.numKvBlocks, "fix the KV cache size in blocks (testing)");
    app.add_flag("--enforce-eager", o.enforceEager, "CUDA: run without CUDA graphs");
    app.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", o.enablePrefixCaching,
                 "reuse the KV cache of prompt prefixes seen before (default: on)");
    app.add_flag("--batch-invariant", o.batchInvariant,
                 "answers that do not depend on the batch (the CPU backend always; CUDA: not yet)");
}

// A launch error in the command line's terms: the setting at fault named by its flag, and for a
// load that does not fit in memory, the flags that would make it fit.
inline std::string launchErrorForCli(const Error& error)
{
    std::string text = error.message;
    if (!error.field.empty()) {
        std::string flag = "--" + error.field;
        std::replace(flag.begin(), flag.end(), '_', '-');
        text = flag + ": " + text;
    }
    if (error.code == ErrorCode::OutOfMemory)
        text +=
            error.field == "gpu_memory_utilization"
                ? ". Lower --max-model-len, raise --gpu-memory-utilization, or use --quantization int4."
                : ". Lower --max-num-batched-tokens, --max-num-seqs or --max-model-len, or use --quantization int4.";
    return text;
}

}  // namespace brook
