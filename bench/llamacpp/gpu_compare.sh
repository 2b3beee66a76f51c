#!/bin/bash
# Brook's CUDA backend against llama.cpp's on the same GPU, same model (the README's GPU table).
# On the GPU machine, from the repository root, after `source scripts/gpu/env.sh` and a build in
# build-gpu/ (targets brook-bench brook-make-test-model). llama.cpp comes as the source tarball
# fetch.sh packs (the GPU machine has no network) and is built with CUDA for this GPU alone.
# Usage: bench/llamacpp/gpu_compare.sh LLAMA_SRC_TARBALL OUT
#   OUT: a folder; compare.txt gets the commands and their results.
#
# The measures, each side's nearest equivalent:
#   batch-1 decode after a 128-token prompt: brook-bench latency --input-len 128 --output-len 256
#     against llama-bench -p 0 -n 256 -d 128 (256 tokens decoded at context 128 and on);
#   a 512-token prompt: brook-bench latency --input-len 512 --output-len 2 (TTFT: the request's
#     prompt forward, first sampling, engine path) against llama-bench -p 512 (the forward alone);
#   128 requests x (128 in, 256 out) at once: brook-bench throughput against llama-batched-bench
#     -npp 128 -ntg 256 -npl 128 (output tokens over the whole time, prompts included).
set -uo pipefail
TARBALL=$1
OUT=$2
B=build-gpu/bin
SRC=build-llamacpp/src
mkdir -p "$OUT"
log=$OUT/compare.txt
run() { echo "\$ $*" | tee -a "$log"; timeout "${T:-300}" "$@" 2>&1 | grep -vE "^\[20|^llama_|^load|^print_info|^ggml_|^common_|^main: " | tee -a "$log"; }

if [ ! -x "$SRC/build/bin/llama-bench" ]; then
    mkdir -p "$SRC" && tar xJf "$TARBALL" -C "$SRC"
    cmake -S "$SRC" -B "$SRC/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF >"$OUT/llamacpp-cmake.log" 2>&1 ||
        { tail -20 "$OUT/llamacpp-cmake.log"; exit 1; }
    ninja -C "$SRC/build" llama-bench llama-batched-bench >"$OUT/llamacpp-build.log" 2>&1 ||
        { tail -20 "$OUT/llamacpp-build.log"; exit 1; }
fi
LB=$SRC/build/bin
model=/tmp/brook-ernie03b
[ -d "$model" ] || $B/brook-make-test-model "$model" --shape ernie-0.3b >/dev/null
[ -f "$model.gguf" ] || python3 bench/llamacpp/make_gguf.py "$model" "$model.gguf"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"
L="--model $model --device cuda --max-model-len 4096"
for round in 1 2; do
    echo "== round $round" | tee -a "$log"
    run $B/brook-bench latency $L --input-len 128 --output-len 256 --max-num-seqs 8 --repeats 5
    run $LB/llama-bench -m "$model.gguf" -ngl 99 -fa on -p 0 -n 256 -d 128 -r 5
    run $B/brook-bench latency $L --input-len 512 --output-len 2 --max-num-seqs 8 --repeats 5
    run $LB/llama-bench -m "$model.gguf" -ngl 99 -fa on -p 512 -n 0 -r 5
    run $B/brook-bench throughput $L --num-prompts 128 --input-len 128 --output-len 256 --max-num-seqs 256
    run $LB/llama-batched-bench -m "$model.gguf" -ngl 99 -fa on -c 65536 -npp 128 -ntg 256 -npl 128
done
