# Sourced by the packaging tests: starts a brook-serve binary on a free port with a model folder,
# asks one completion over plain HTTP and stops it with SIGTERM. Speaks HTTP through bash's
# /dev/tcp so that it needs no curl (which would load libraries the tarball test hides).
#   serve_one_completion BINARY MODEL_DIR LOG_FILE

http_request() {  # PORT METHOD PATH [BODY] -> the raw response on stdout
  local port=$1 method=$2 path=$3 body=${4:-}
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
    "$method" "$path" "${#body}" "$body" >&3
  timeout 60 cat <&3
  exec 3<&-
}

serve_one_completion() {
  local binary=$1 model=$2 log=$3 port="" i response
  : >"$log"
  "$binary" "$model" --served-model-name tiny --port 0 --device auto --max-model-len 512 >"$log" 2>&1 &
  local pid=$!
  for i in $(seq 1 300); do
    port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$log" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "FAIL: $binary did not start listening"; cat "$log"; kill -9 "$pid" 2>/dev/null; return 1
  fi
  for i in $(seq 1 600); do
    http_request "$port" GET /health | head -n 1 | grep -q " 200 " && break
    sleep 0.1
  done
  response=$(http_request "$port" POST /v1/completions \
    '{"model":"tiny","prompt":"Hello, my name is","max_tokens":8,"temperature":0,"ignore_eos":true}')
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  echo "$response" | tail -n 1
  if ! echo "$response" | head -n 1 | grep -q " 200 "; then
    echo "FAIL: the completion did not answer 200"; echo "$response"; cat "$log"; return 1
  fi
  if ! echo "$response" | grep -q '"completion_tokens":8'; then
    echo "FAIL: expected 8 completion tokens"; return 1
  fi
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: $binary exited with $rc after SIGTERM"; cat "$log"; return 1
  fi
  echo "ok: $binary answered a completion on port $port and stopped cleanly"
}
