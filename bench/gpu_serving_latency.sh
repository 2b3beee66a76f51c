#!/bin/bash
# Issue 19's online rows on a GPU in one run: the engine's TTFT and decode (brook-bench latency),
# then brook-serve over HTTP at 1, 16 and 256 clients, and the 256-client row again for each
# --max-num-batched-tokens in $BUDGETS (the per-step token budget a long prefill may fill, which
# sets how long the decodes sharing its step wait: ITL p99 against throughput).
# Run in a configured GPU build's source root (scripts/gpu/env.sh sourced), after
#   ninja -C build-gpu; LOG=<dir> bench/gpu_serving_latency.sh
# Every command's output goes to $LOG/<step>.txt; the key lines to stdout.
set -u
B=${BUILD:-build-gpu}/bin
LOG=${LOG:-/tmp/gpu-latency}
M=${MODEL:-/tmp/m-ernie}
BUDGETS=${BUDGETS:-2048 4096 8192}
mkdir -p "$LOG"
[ -d "$M" ] || "$B/brook-make-test-model" "$M" --shape ernie-0.3b > "$LOG/model.txt" 2>&1

. "$(dirname "$0")/serve_helpers.sh"
key() { grep -E "$2" "$LOG/$1.txt" | tr '\n' ' ' | tr -s ' '; echo; }
bench_serve() {  # bench_serve NAME PORT [flags...]
    local name=$1 port=$2
    shift 2
    "$B/brook-bench" serve --base-url "http://127.0.0.1:$port" --tokenizer "$M" --ignore-eos --seed 0 "$@" \
        > "$LOG/$name.txt" 2>&1
    echo "$name: $(key "$name" "Output token throughput|Median TTFT|P99 TTFT|Median ITL|P99 ITL")"
}

"$B/brook-bench" latency --model "$M" --device cuda --max-model-len 4096 --input-len 512 --output-len 2 --repeats 5 \
    > "$LOG/engine-ttft-512.txt" 2>&1
echo "engine TTFT 512: $(key engine-ttft-512 best)"
"$B/brook-bench" latency --model "$M" --device cuda --max-model-len 4096 --input-len 128 --output-len 256 --repeats 5 \
    > "$LOG/engine-decode.txt" 2>&1
echo "engine decode 128/256: $(key engine-decode best)"

serve 8200 --device cuda --max-model-len 4096 || exit 1
bench_serve c1 8200 --num-prompts 64 --random-input-len 512 --random-output-len 128 --max-concurrency 1
bench_serve c16 8200 --num-prompts 256 --random-input-len 128 --random-output-len 256 --max-concurrency 16
stop

for budget in $BUDGETS; do
    serve 8201 --device cuda --max-model-len 4096 --max-num-batched-tokens "$budget" || exit 1
    bench_serve "c256-budget-$budget" 8201 --num-prompts 1024 --random-input-len 562 --random-output-len 562 \
        --random-range-ratio 0.822 --max-concurrency 256
    stop
done
