#!/bin/bash
# Issue 18 on a GPU: the CUDA tests, prefix caching (multi-turn TTFT on/off, the random dataset
# on/off) and structured outputs (batch-64 throughput with and without a JSON schema), in one run.
# Run in a configured GPU build's source root (scripts/gpu/env.sh sourced), after
#   ninja -C build-gpu; LOG=<dir> bench/gpu_serving_features.sh
# Every command's output goes to $LOG/<step>.txt; a one-line summary per step to stdout.
set -u
B=${BUILD:-build-gpu}/bin
LOG=${LOG:-/tmp/gpu-serving}
M=${MODEL:-/tmp/m-ernie}
mkdir -p "$LOG"
[ -d "$M" ] || "$B/brook-make-test-model" "$M" --shape ernie-0.3b > "$LOG/model.txt" 2>&1

. "$(dirname "$0")/serve_helpers.sh"

multi_turn() {  # multi_turn PORT PROMPTS CONCURRENCY
    "$B/brook-bench" serve --base-url "http://127.0.0.1:$1" --dataset-name multi-turn --multi-turn-turns 8 \
        --multi-turn-system-len 1000 --random-input-len 50 --random-output-len 32 --ignore-eos --seed 1 \
        --tokenizer "$M" --num-prompts "$2" --max-concurrency "$3"
}
random_set() {
    "$B/brook-bench" serve --base-url "http://127.0.0.1:$1" --num-prompts 1000 --random-input-len 1024 \
        --random-output-len 128 --ignore-eos --max-concurrency 64 --tokenizer "$M" --seed 0
}

for mode in on off; do
    flags=()
    [ "$mode" = off ] && flags=(--no-enable-prefix-caching)
    port=$([ "$mode" = on ] && echo 8100 || echo 8101)
    serve "$port" "${flags[@]}" || exit 1
    multi_turn "$port" 32 1 > "$LOG/multi-turn-c1-$mode.txt" 2>&1
    multi_turn "$port" 64 32 > "$LOG/multi-turn-c32-$mode.txt" 2>&1
    random_set "$port" > "$LOG/random-$mode.txt" 2>&1
    stop
    echo "prefix caching $mode: done"
done

for round in 1 2; do
    for schema in none people; do
        extra=()
        [ "$schema" = people ] && extra=(--json-schema bench/structured/people_schema.json)
        "$B/brook-bench" throughput --device cuda --model "$M" --num-prompts 64 --input-len 32 --output-len 128 \
            "${extra[@]}" > "$LOG/structured-$schema-$round.txt" 2>&1
        echo "structured $schema round $round: $(grep 'output tokens/s' "$LOG/structured-$schema-$round.txt")"
    done
done
