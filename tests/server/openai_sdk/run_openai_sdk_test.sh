#!/usr/bin/env bash
# CTest entry for the OpenAI Node SDK check: writes a tiny test model, starts brook-serve on a
# free port, runs test_openai_sdk.mjs against it, then stops the server with SIGTERM and expects
# exit code 0. Exits 77 (CTest: skipped) when node or the `openai` package is missing; install
# it with `npm ci --prefix tests/server/openai_sdk` (scripts/test.sh does when npm exists).
#   run_openai_sdk_test.sh BIN_DIR
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:?usage: run_openai_sdk_test.sh BIN_DIR}"

if ! command -v node >/dev/null 2>&1; then
  echo "node is not installed: skipping"
  exit 77
fi
if [ ! -d "$here/node_modules/openai" ]; then
  echo "the openai package is not installed (npm ci --prefix tests/server/openai_sdk): skipping"
  exit 77
fi

work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$bin/brook-make-test-model" "$work/model" --shape tiny --dtype fp32 >/dev/null 2>&1 || { echo "brook-make-test-model failed"; exit 1; }
"$bin/brook-serve" "$work/model" --port 0 --device cpu --max-model-len 4096 --served-model-name tiny-ernie \
  --api-key sdk-test-key 2>"$work/serve.log" &
server=$!

port=""
for _ in $(seq 1 200); do
  port="$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$work/serve.log" | head -n1)"
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.05
done
if [ -z "$port" ]; then
  echo "brook-serve did not start:"; cat "$work/serve.log"; exit 1
fi

BROOK_BASE_URL="http://127.0.0.1:$port" BROOK_API_KEY=sdk-test-key node "$here/test_openai_sdk.mjs"
status=$?

kill -TERM "$server"
wait "$server"
serve_status=$?
server=""
if [ "$serve_status" -ne 0 ]; then
  echo "brook-serve exited with $serve_status after SIGTERM"; tail -n 20 "$work/serve.log"; exit 1
fi
if [ "$status" -ne 0 ]; then tail -n 40 "$work/serve.log"; fi
exit "$status"
