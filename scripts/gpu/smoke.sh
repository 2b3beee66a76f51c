#!/usr/bin/env bash
# The GPU side of the README's two commands, in one device call. Run it before resolving any
# issue that touched src/cuda, src/launch or the load path. On the GPU machine, from the
# repository root, with .devdebs/ carried (scripts/gpu/fetch-deps.sh fills it here):
#   bash scripts/gpu/smoke.sh [OUT_DIR] [STAGE...]
# Stages, in order (default: all): build run serve bench app tests reference.
#   build  scripts/build.sh: the README's build, GUI included, in build/
#   run    scripts/run.sh MODEL "你好": the README's first command, answered on the GPU
#   serve  brook-serve with its defaults, then with --max-num-seqs 1: a chat completion each
#   bench  brook-bench latency on the ERNIE-0.3B shape
#   app    brook offscreen on the model, --screenshot OUT_DIR/app.png
#   tests  ctest -L cuda -j8, three times in a row (the CUDA tests share one GPU)
#   reference  transformers' fp32 logits for tests/data/hf_tiny_bf16 (OUT_DIR/hf_tiny_bf16_expected.safetensors,
#          to commit as that folder's expected.safetensors) and for the full ERNIE-0.3B shape at
#          prefixes 960-1,023, which test_cuda_backend's matchesTransformersFullShape then checks
#          (against its fp64 run too); and transformers' RoPE frequencies
#          (OUT_DIR/rope_inv_freq_transformers.json, to commit to tests/data/)
# Writes OUT_DIR/smoke.txt (a PASS or FAIL line per check) and OUT_DIR/logs.tgz (one log per
# check: the device returns at most 8 files); exits 1 when any check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-${OUT:-/tmp/brook-smoke}}
shift || true
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(build run serve bench app tests)
logs=/tmp/brook-smoke-logs
mkdir -p "$out" "$logs"
source scripts/gpu/env.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$out/smoke.txt"

failed=0
check() {  # check NAME COMMAND...: runs it with its output in OUT_DIR/NAME.log
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" > "$logs/$name.log" 2>&1 || rc=$?
  local verdict="PASS"
  [ $rc -eq 0 ] || { verdict="FAIL (exit $rc)"; failed=1; }
  echo "$verdict $name ($((SECONDS - start)) s): $*" | tee -a "$out/smoke.txt"
  [ $rc -eq 0 ] || tail -n 25 "$logs/$name.log"
}
want() { [[ " ${stages[*]} " == *" $1 "* ]]; }

B=build/bin
model=/tmp/brook-smoke-ernie03b
ensure_model() { [ -d "$model" ] || $B/brook-make-test-model "$model" --shape ernie-0.3b > /dev/null; }

# A chat completion against brook-serve on PORT; prints the reply and fails without one.
chat() {
  python3 - "$1" <<'PY'
import json, sys, urllib.request
body = {"model": "smoke", "messages": [{"role": "user", "content": "你好"}], "max_tokens": 16,
        "ignore_eos": True, "temperature": 0}
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/chat/completions", json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
reply = json.load(urllib.request.urlopen(req, timeout=120))
print(json.dumps(reply, ensure_ascii=False))
assert reply["usage"]["completion_tokens"] == 16, reply["usage"]
PY
}

# brook-serve ARGS...: starts it on a free port, waits for /health, sends two chats, stops it.
serve_and_chat() {
  local log
  log=$(mktemp)
  $B/brook-serve "$model" --served-model-name smoke --port 0 "$@" > "$log" 2>&1 &
  local pid=$! port=""
  for _ in $(seq 240); do
    port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$log" | head -n 1)
    [ -n "$port" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.5
  done
  # The port opens before the model has loaded (/health answers 503 until then).
  for _ in $(seq 240); do
    [ -n "$port" ] || break
    python3 -c "import sys, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/health', timeout=5)" \
      "$port" 2>/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.5
  done
  cat "$log"
  local rc=1
  if [ -n "$port" ] && chat "$port" && chat "$port"; then rc=0; fi
  kill $pid 2>/dev/null
  wait $pid 2>/dev/null
  grep -E "CUDA backend|error" "$log" | head -n 20
  rm -f "$log"
  return $rc
}

cuda_tests_three_times() {
  for round in 1 2 3; do
    echo "--- round $round"
    ctest --test-dir build -L cuda -j8 --output-on-failure --timeout 600 || return 1
  done
}

if want build; then
  check build bash scripts/build.sh
  # Without the app's packages the rest can still be checked: a build without the GUI (the
  # build check above has already failed the run).
  grep -q '^FAIL .* build (' "$out/smoke.txt" && check build_without_gui \
    bash -c 'cmake build -DBROOK_WITH_GUI=OFF && cmake --build build --parallel "$(nproc)"'
fi
if want run; then
  ensure_model
  check run bash scripts/run.sh "$model" "你好"
  # The load-time plan's own test (no GPU needed) runs beside it.
  check load_plan_test ctest --test-dir build -R '^test_cuda_load_plan$' --output-on-failure
fi
if want serve; then
  ensure_model
  check serve_defaults serve_and_chat
  check serve_one_seq serve_and_chat --max-num-seqs 1
fi
if want bench; then
  ensure_model
  check bench_latency $B/brook-bench latency --model "$model" --device cuda --input-len 128 --output-len 128 \
    --repeats 3
  grep -h "best TTFT" "$logs/bench_latency.log" | tee -a "$out/smoke.txt"
fi
if want app; then
  ensure_model
  check app timeout 180 $B/brook --model "$model" --screenshot "$out/app.png"
fi
want tests && check cuda_tests cuda_tests_three_times
if want reference; then
  check hf_tiny_bf16 python3 scripts/make_hf_fixture.py --shape tiny --weights tests/data/hf_tiny_bf16 \
    --out /tmp/brook-hf-tiny-bf16
  cp /tmp/brook-hf-tiny-bf16/expected.safetensors "$out/hf_tiny_bf16_expected.safetensors" 2>/dev/null
  check rope_reference sh -c "python3 scripts/rope_reference.py > '$out/rope_inv_freq_transformers.json'"
  check hf_full_reference python3 scripts/make_hf_full_reference.py --out /tmp/hf-ernie-0.3b --prompt-len 960 \
    --steps 64
  check full_shape env BROOK_HF_FULL_REFERENCE=/tmp/hf-ernie-0.3b build/bin/test_cuda_backend \
    matchesTransformersFullShape
  grep -h "vs transformers" "$logs/full_shape.log" | tee -a "$out/smoke.txt"
fi
tar czf "$out/logs.tgz" -C "$logs" .

echo "smoke: $(grep -c '^PASS' "$out/smoke.txt") passed, $(grep -c '^FAIL' "$out/smoke.txt") failed"
exit $failed
