#!/usr/bin/env bash
# On the GPU machine, after `source scripts/gpu/env.sh` and a build of brook-step-bench in
# build-gpu/: profiles ONE prefill step of a prompt of $2 tokens (default 512) with ncu and prints
# the time per kernel, summed by kernel name, and the sum of all kernel times. brook-step-bench
# --prefill $2 (run after it) gives the same step's forward time with CUDA events: the difference
# is what the launches between kernels cost. $3 (default 0) tokens are cached before the prompt:
# the step a prefix-cache hit leaves. Output to $1 (a folder).
set -uo pipefail
out=${1:-/tmp/brook-profile}
len=${2:-512}
cached=${3:-0}
mkdir -p "$out"
ncu --profile-from-start off --clock-control none --csv --page raw --print-units base \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum \
    build-gpu/bin/brook-step-bench --prefill "$len" --prefill-context "$cached" --iterations 5 --profile-prefill \
    > "$out/ncu-prefill$len.csv" 2> "$out/ncu-prefill$len.log"
python3 "$(dirname "$0")/ncu_kernel_sums.py" "$out/ncu-prefill$len.csv"
