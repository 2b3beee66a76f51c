#!/bin/bash
# The CPU backend's benchmark table (docs/benchmarks.md, "CPU backend"), run ROUNDS times with the
# load average before each command: on a shared machine take the best round and quote its load.
# Usage: bench/cpu_bench_rounds.sh [MODEL_DIR] [ROUNDS] [BUILD_DIR]
#   MODEL_DIR: an ERNIE-0.3B-shaped model (brook-make-test-model DIR --shape ernie-0.3b)
set -u
MODEL=${1:-/tmp/m-ernie}
ROUNDS=${2:-3}
BIN=${3:-build}/bin
stamp() { echo "== $(date +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) :: $*"; }
for round in $(seq 1 "$ROUNDS"); do
    # The host's memory read rate this minute: bf16 decode streams 0.69 GB a token, so its tok/s
    # follows this figure (40-68 GB/s within one hour on this VM type).
    stamp "round $round: memory read rate"
    "$BIN/cpu_kernel_bench" --read-bandwidth --threads 2 --repeats 5 2>&1 | grep "memory read"
    # And its vdpbf16ps rate: the prompt and batch-8 decode are bound by it, and it differs by host.
    "$BIN/cpu_kernel_bench" --compute-peak --threads 2 --repeats 3 2>&1 | grep "compute peak"
    stamp "latency bf16"
    "$BIN/brook-bench" latency --device cpu --model "$MODEL" --input-len 128 --output-len 32 2>&1 | grep -E "^run|best"
    stamp "latency int8"
    "$BIN/brook-bench" latency --device cpu --model "$MODEL" --input-len 128 --output-len 32 --quantization int8 2>&1 |
        grep -E "^run|best"
    stamp "latency int4"
    "$BIN/brook-bench" latency --device cpu --model "$MODEL" --input-len 128 --output-len 32 --quantization int4 2>&1 |
        grep -E "^run|best"
    for prompts in 8 1; do
        stamp "throughput bf16, $prompts prompts"
        "$BIN/brook-bench" throughput --device cpu --model "$MODEL" --num-prompts "$prompts" --input-len 32 \
            --output-len 32 2>&1 | grep -E "output tokens/s|weights|engine"
    done
    stamp "throughput int8, 1 prompt"
    "$BIN/brook-bench" throughput --device cpu --model "$MODEL" --num-prompts 1 --input-len 32 --output-len 32 \
        --quantization int8 2>&1 | grep -E "output tokens/s|weights"
    stamp "sampler"
    "$BIN/cpu_kernel_bench" --sampler-only --repeats 20 --threads 2 2>&1 | grep sampler
done
stamp end
