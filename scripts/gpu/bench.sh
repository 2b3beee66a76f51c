#!/usr/bin/env bash
# On the GPU machine, from the repository root, after `source scripts/gpu/env.sh` and a build in
# build-gpu/ (targets brook-bench brook-step-bench brook-serve brook-make-test-model
# attention_bench sampler_bench): every brook-bench run recorded in docs/benchmarks.md, on one random-weight
# ERNIE-0.3B folder.
# Output to $1 (a folder): bench.txt (commands and results), gpu.txt, serve.log.
# transformers' baselines: (unset LD_LIBRARY_PATH; python3 bench/hf_baseline.py [--compile]).
set -uo pipefail
out=${1:-/tmp/brook-bench-out}
mkdir -p "$out"
B=build-gpu/bin
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
run() { echo "\$ $*" | tee -a "$out/bench.txt"; timeout "${T:-180}" "$@" 2>&1 | grep -vE "^\[20" | tee -a "$out/bench.txt"; }
model=/tmp/brook-ernie03b
[ -d "$model" ] || $B/brook-make-test-model "$model" --shape ernie-0.3b > /dev/null
L="--model $model --device cuda --max-model-len 4096"
run $B/brook-bench latency $L --input-len 128 --output-len 256 --max-num-seqs 8 --repeats 5
run $B/brook-bench latency $L --input-len 512 --output-len 2 --max-num-seqs 8 --repeats 5
run $B/brook-bench throughput $L --num-prompts 128 --input-len 128 --output-len 256 --max-num-seqs 256
run $B/brook-bench throughput $L --num-prompts 256 --max-num-seqs 256
for q in int8 int4; do
  run $B/brook-bench latency $L --quantization $q --input-len 128 --output-len 256 --max-num-seqs 8 --repeats 3
  run $B/brook-bench throughput $L --quantization $q --num-prompts 128 --input-len 128 --output-len 256 --max-num-seqs 256
  run $B/brook-bench quality --model $model --reference $model --device cuda --quantization $q --max-tokens 512
done
run $B/brook-step-bench --model $model --batch 1 8 64 256
for c in 16 1024; do run $B/brook-step-bench --model $model --batch 1 --context $c; done
run $B/attention_bench
run $B/sampler_bench --rows 1 64 128 256
run $B/brook-step-bench --model $model --batch 1 --pdl-early-wait 3   # what the work before the PDL wait buys
# Online: brook-serve on the GPU, vllm-bench-serve style load at four concurrencies.
$B/brook-serve "$model" --device cuda --max-model-len 4096 --port 8011 > "$out/serve.log" 2>&1 &
server=$!
for _ in $(seq 120); do
  python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8011/health')" 2>/dev/null && break
  sleep 1
done
for c in "1 16" "16 64" "64 256" "256 512"; do
  set -- $c
  run $B/brook-bench serve --port 8011 --num-prompts "$2" --random-input-len 512 --random-output-len 128 \
      --ignore-eos --max-concurrency "$1" --tokenizer "$model"
done
kill "$server"
