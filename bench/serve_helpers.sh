# Sourced by the GPU serving scripts (bench/gpu_serving_features.sh, bench/gpu_serving_latency.sh).
# Expects B (the bin folder), M (the model folder) and LOG (the output folder) to be set.

# serve PORT [brook-serve flags...]: starts brook-serve on M in the background (its output in
# $LOG/serve-PORT.txt, its pid in SERVER) and waits until /health answers.
serve() {
    local port=$1
    shift
    "$B/brook-serve" "$M" --port "$port" "$@" > "$LOG/serve-$port.txt" 2>&1 &
    SERVER=$!
    for _ in $(seq 1 120); do
        python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=2)" \
            2> /dev/null && return 0
        sleep 1
    done
    echo "brook-serve on $port did not come up" >&2
    return 1
}

# stop: ends the server `serve` started.
stop() { kill "$SERVER" 2> /dev/null; wait "$SERVER" 2> /dev/null; }
