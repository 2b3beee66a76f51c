#!/usr/bin/env bash
# On the GPU machine, after `source scripts/gpu/env.sh` and a build of brook-step-bench in
# build-gpu/: profiles ONE decode step (graph nodes one by one) of batch size $2 at context $3 (default 256) with ncu and
# prints the time per kernel, summed by kernel name. Output to $1 (a folder).
set -uo pipefail
out=${1:-/tmp/brook-profile}
batch=${2:-1}
context=${3:-256}
mkdir -p "$out"
ncu --profile-from-start off --graph-profiling node --clock-control none --csv --page raw --print-units base \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum \
    build-gpu/bin/brook-step-bench --batch "$batch" --context "$context" --iterations 5 --profile-step \
    > "$out/ncu-batch$batch.csv" 2> "$out/ncu-batch$batch.log"
python3 "$(dirname "$0")/ncu_kernel_sums.py" "$out/ncu-batch$batch.csv"
