#!/bin/bash
# bf16 batch-1 decode, llama.cpp against Brook, in tight pairs: each round runs the host's memory
# read rate on one and on two threads, llama-bench's tg32 at depth 128 (mean of 3), then
# brook-bench latency (median of its 3 runs), ~10 s a round. compare.sh's rounds take ~40 s and
# cover every format; on a VM whose read rate moves from one minute to the next, a bandwidth-bound
# measure needs its two programs seconds apart, and the ratio of each pair rather than the ratio
# of two medians. Prints each round, then the medians and the median of the per-round ratios.
# Needs compare.sh's work folder (llama.cpp built, the GGUF written) and Brook's build.
#
# Usage: bench/llamacpp/paired_decode.sh [MODEL_DIR] [ROUNDS] [BUILD_DIR] [WORK]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=${1:-/tmp/m-ernie}
ROUNDS=${2:-16}
BIN=$(realpath "${3:-build}")/bin
WORK=${4:-/tmp/llamacpp}
THREADS=${THREADS:-2}
LB=$WORK/src/build/bin
for f in "$LB/llama-bench" "$WORK/ernie-bf16.gguf" "$BIN/brook-bench" "$BIN/cpu_kernel_bench"; do
    [ -e "$f" ] || { echo "missing $f: run bench/llamacpp/compare.sh first" >&2; exit 1; }
done

readRate() { "$BIN/cpu_kernel_bench" --read-bandwidth --threads "$1" --repeats 3 | sed -n 's/.*median \([0-9.]*\) GB.*/\1/p'; }
echo "llama.cpp $(git -C "$WORK/src" rev-parse --short HEAD), Brook $(git -C "$HERE" rev-parse --short HEAD), $THREADS threads"
echo "time     read1 read2  llama.cpp  Brook  Brook/llama.cpp"
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for round in $(seq 1 "$ROUNDS"); do
    r1=$(readRate 1)
    r2=$(readRate "$THREADS")
    llama=$("$LB/llama-bench" -m "$WORK/ernie-bf16.gguf" -t "$THREADS" -r 3 -p 0 -n 32 -d 128 2>/dev/null |
        awk -F'|' '/tg32/ {split($8, v, " "); print v[1]}')
    brook=$("$BIN/brook-bench" latency --device cpu --model "$MODEL" --input-len 128 --output-len 32 2>&1 |
        sed -n 's/^run [0-9]*: .*decode \([0-9.]*\) tokens.*/\1/p' | sort -n | sed -n 2p)
    if [ -z "$llama" ] || [ -z "$brook" ] || [ -z "$r1" ] || [ -z "$r2" ]; then
        echo "round $round: a program printed no figure (llama.cpp '$llama', Brook '$brook'); skipped" >&2
        continue
    fi
    echo "$(date +%H:%M:%S) $r1 $r2 $llama $brook" | awk '{printf "%s %5.1f %5.1f %9.1f %6.1f %8.2fx\n", $1, $2, $3, $4, $5, $5 / $4}'
done | tee "$rows"
python3 - "$rows" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line[:1].isdigit()]
if not rows:
    sys.exit("no round gave figures")
col = lambda i: [float(r[i].rstrip("x")) for r in rows]
print(f"medians over {len(rows)} rounds: read {statistics.median(col(1)):.1f} GB/s on 1 thread, "
      f"{statistics.median(col(2)):.1f} on all; llama.cpp {statistics.median(col(3)):.1f} tok/s, "
      f"Brook {statistics.median(col(4)):.1f}; per-round Brook / llama.cpp {statistics.median(col(5)):.2f}x "
      f"(Brook ahead in {sum(x > 1 for x in col(5))} of {len(rows)})")
PY
