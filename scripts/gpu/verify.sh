#!/usr/bin/env bash
# shellcheck disable=SC2317  # the ready_N checks are called as ready_$p
# Issue 51's driver: the GPU verification of this round's CUDA code in one device call. On the GPU
# machine, from the repository root, with .devdebs/ carried (scripts/gpu/fetch-deps.sh fills it):
#   bash scripts/gpu/verify.sh OUT [--dry-run]
# It builds once (build-gpu/, by scripts/gpu/env.sh's brook_gpu_configure: the targets of the parts
# that will run), then runs the issue's parts in its order, each under `timeout` with a budget:
#   1 model families on CUDA    ready when src/cuda and tests/cuda name Qwen3
#   2 embeddings on CUDA        ready when src/server routes /v1/embeddings
#   3 batch invariance on CUDA  ready when src/launch/backend_support.cpp lets CUDA take --batch-invariant
#   4 pre-Hopper paths          ready when the build knows BROOK_CUDA_EMULATE_ARCH
#   5 full regression run       bench/copy_bandwidth_bench.cu, then scripts/gpu/bench.sh, then
#                               the bandwidth again (the README's GPU figures beside the copy rate)
# A part whose code is not there is reported "skipped: code not written yet" (with what was looked
# for); one whose code is there but whose commands are not in this script yet, "ready: no runner".
# Writes under OUT: summary.txt (each part's status and wall time, the figures bench.sh measured),
# bandwidth.txt, bench.sh's bench.txt / gpu.txt / serve.log, and logs.tgz (one log per step).
# --dry-run prints the parts' status and every command it would run, writes OUT/summary.txt, and
# builds, sources and runs nothing (it works on a machine without a GPU).
# VERIFY_COMMIT names the commit in summary.txt (else the tree's own .git is asked).
# Budgets in seconds (environment): VERIFY_TOTAL (whole run, default 560), VERIFY_BUILD (300),
# VERIFY_BW (60 per bandwidth run), VERIFY_BENCH_T (bench.sh's per-command T, 60); bench.sh gets
# what is left of VERIFY_TOTAL less VERIFY_RESERVE (25, for the bandwidth re-run and the logs).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

dry=0
out=""
for a in "$@"; do
  case "$a" in
    --dry-run) dry=1 ;;
    -h|--help) awk 'NR > 2 && !/^#/ {exit} NR > 2' "$0"; exit 0 ;;
    -*) echo "verify.sh: unknown flag $a" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "verify.sh: one OUT folder only" >&2; exit 2; }; out=$a ;;
  esac
done
out=${out:-${OUT:-}}
[ -n "$out" ] || { echo "usage: bash scripts/gpu/verify.sh OUT [--dry-run]" >&2; exit 2; }

total=${VERIFY_TOTAL:-560}
build_budget=${VERIFY_BUILD:-300}
bw_budget=${VERIFY_BW:-60}
bench_t=${VERIFY_BENCH_T:-60}
reserve=${VERIFY_RESERVE:-25}
logs=/tmp/brook-verify-logs
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
start=$SECONDS
say() { echo "$*" | tee -a "$summary"; }
left() { echo $((total - (SECONDS - start))); }

# The device's copy of the tree may carry a .git that is not this checkout's (on 2026-12-07 it named
# 8c32027 while the tree was 0ad7cda): pass VERIFY_COMMIT=$(git rev-parse --short HEAD) from here.
if [ -n "${VERIFY_COMMIT:-}" ]; then
  commit="$VERIFY_COMMIT (given)"
else
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown) (from the tree's .git)"
  [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit, with uncommitted changes"
fi
say "verify.sh (issue 51) $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit$([ $dry = 1 ] && echo ', DRY RUN')"
say "budgets: total ${total} s, build ${build_budget} s, bandwidth ${bw_budget} s a run, bench.sh T=${bench_t} s a command"

# --- which parts have their code ------------------------------------------------------------
# Each check looks at the tree for the code the part runs; REASON says what was looked for.
reason=""
ready_1() { reason="Qwen3 in src/cuda and tests/cuda"
  grep -rqil qwen3 src/cuda 2>/dev/null && grep -rqil qwen3 tests/cuda 2>/dev/null; }
ready_2() { reason="a /v1/embeddings route in src/server"
  grep -rqs '/v1/embeddings' src/server; }
ready_3() { reason="--batch-invariant allowed on CUDA in src/launch/backend_support.cpp's table"
  grep -qsE '\{"--batch-invariant", *(true|false), *true' src/launch/backend_support.cpp; }
ready_4() { reason="BROOK_CUDA_EMULATE_ARCH in the build (CMakeLists.txt, cmake/, src/cuda/)"
  grep -rqs BROOK_CUDA_EMULATE_ARCH CMakeLists.txt cmake src/cuda/CMakeLists.txt; }
ready_5() { reason="scripts/gpu/bench.sh and bench/copy_bandwidth_bench.cu"
  [ -f scripts/gpu/bench.sh ] && [ -f bench/copy_bandwidth_bench.cu ]; }
titles=("" "model families on CUDA" "embeddings on CUDA" "batch invariance on CUDA" "pre-Hopper paths"
        "full regression run")
ready=()
for p in 1 2 3 4 5; do
  if ready_$p; then ready[p]=1; else ready[p]=0; fi
  say "part $p ${titles[p]}: $([ "${ready[p]}" = 1 ] && echo "code present" || echo "skipped: code not written yet") (looked for $reason)"
done

# --- steps --------------------------------------------------------------------------------
failed=0
# step NAME BUDGET COMMAND...: runs COMMAND under timeout with its output in $logs/NAME.log (and on
# stdout), then one summary line: PASS, FAIL (exit N) or TIMEOUT, with its wall time.
step() {
  local name=$1 budget=$2
  shift 2
  local cap
  cap=$(left)
  [ "$budget" -le "$cap" ] || budget=$cap
  if [ $dry = 1 ]; then
    say "would run $name (budget ${budget} s): $*"
    return 0
  fi
  if [ "$budget" -lt 10 ]; then
    say "SKIPPED $name: out of time (${budget} s left)"
    failed=1
    return 1
  fi
  local t0=$SECONDS rc=0
  timeout --kill-after=10 "$budget" "$@" 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  local verdict=PASS
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then verdict="TIMEOUT (budget ${budget} s)"; failed=1
  elif [ "$rc" -ne 0 ]; then verdict="FAIL (exit $rc)"; failed=1; fi
  say "$verdict $name ($((SECONDS - t0)) s, budget ${budget} s): $*"
  [ "$rc" -eq 0 ] || tail -n 20 "$logs/$name.log" | sed 's/^/    /' | tee -a "$summary"
  return "$rc"
}

# The build: one configure and one cmake --build for every target the ready parts need.
targets=()
[ "${ready[5]}" = 1 ] && targets+=(brook-bench brook-step-bench brook-serve brook-make-test-model attention_bench
                                 sampler_bench copy_bandwidth_bench)
if [ $dry = 0 ]; then
  rm -rf "$logs"
  mkdir -p "$logs"
  # shellcheck source=scripts/gpu/env.sh
  source scripts/gpu/env.sh
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)
  say "GPU: $gpu"
else
  say "would source scripts/gpu/env.sh and ask nvidia-smi for the GPU's name, driver and memory"
fi
build_ok=1
if [ ${#targets[@]} -gt 0 ]; then
  # shellcheck disable=SC2016  # expanded by the inner bash
  build_cmd='source scripts/gpu/env.sh && { [ -f build-gpu/build.ninja ] || brook_gpu_configure; } &&
    cmake --build build-gpu --parallel "$(nproc)" --target '"${targets[*]}"
  step build "$build_budget" bash -c "$build_cmd" || build_ok=0
fi

for p in 1 2 3 4; do
  [ "${ready[p]}" = 1 ] || continue
  # Its code is here but the commands that check its pass bar are not written into this script.
  say "part $p ${titles[p]}: ready: no runner in scripts/gpu/verify.sh yet (add its commands here)"
done

if [ "${ready[5]}" = 1 ]; then
  if [ $build_ok = 1 ]; then
    bw="$out/bandwidth.txt"
    [ $dry = 1 ] || : > "$bw"
    for when in before bench after; do
      if [ $when = bench ]; then
        step bench $(( $(left) - reserve )) env T="$bench_t" bash scripts/gpu/bench.sh "$out"
        continue
      fi
      step bandwidth_$when "$bw_budget" build-gpu/bin/copy_bandwidth_bench
      [ $dry = 1 ] || { echo "--- $when bench.sh"; cat "$logs/bandwidth_$when.log"; } >> "$bw"
    done
  else
    say "part 5 ${titles[5]}: not run: the build failed"
  fi
fi

# The figures of the README's GPU table, as bench.sh printed them (each command, then its result).
if [ $dry = 0 ] && [ -f "$out/bench.txt" ]; then
  say "figures (bench.txt):"
  grep -E '^\$ .*brook-bench (latency|throughput)|best TTFT|^output tokens/s' "$out/bench.txt" \
    | sed 's/^/    /' | tee -a "$summary"
fi
[ $dry = 1 ] || tar czf "$out/logs.tgz" -C "$logs" .
say "total wall: $((SECONDS - start)) s; $([ $failed = 0 ] && echo 'every step that ran passed' || echo 'a step failed or timed out')"
exit $failed
