#!/usr/bin/env bash
# On the GPU machine, from the repository root, after `source scripts/gpu/env.sh` and a build in
# build-gpu/: the brook-bench runs recorded in docs/benchmarks.md. Output to $1 (a folder).
set -uo pipefail
out=${1:-/tmp/brook-bench-out}
mkdir -p "$out"
bench=build-gpu/bin/brook-bench
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
run() { echo "\$ $*" | tee -a "$out/bench.txt"; "$@" 2>&1 | grep -vE "^\[" | tee -a "$out/bench.txt"; }
run $bench latency --random-weights ernie-0.3b --device cuda --input-len 128 --output-len 256 --max-num-seqs 8 --max-model-len 4096 --repeats 5
run $bench latency --random-weights ernie-0.3b --device cuda --input-len 512 --output-len 2 --max-num-seqs 8 --max-model-len 4096 --repeats 5
run $bench throughput --random-weights ernie-0.3b --device cuda --num-prompts 128 --input-len 128 --output-len 256 --max-num-seqs 256 --max-model-len 4096
run $bench throughput --random-weights ernie-0.3b --device cuda --num-prompts 256 --max-num-seqs 256 --max-model-len 4096
