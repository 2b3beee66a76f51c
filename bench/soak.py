#!/usr/bin/env python3
"""Reliability soak for brook-serve (docs/benchmarks.md, "Reliability").

Starts brook-serve on a model folder, asks one greedy request, then for DURATION seconds runs
`brook-bench serve --duration` (streaming chat requests) while mixing in, from this script:
random disconnects (streaming requests dropped at random points), one slow-client flood
(FLOOD connections that send a header line every few seconds), and bursts of bad inputs
(malformed JSON, wrong types, huge numbers, bad headers, chunked and gzip bodies, wrong methods).
A warm-up of the same mix (--warmup seconds) comes first, so the baseline RSS is the working
set: with --num-kv-blocks small enough, the warm-up touches the whole KV arena too (else the
arena's untouched pages grow into the measure as the prefix cache fills it; the breakdown below
shows them as "kv+weights"). RSS is sampled every --sample-every seconds. Afterwards it checks: 0
requests running or waiting, KV-cache usage 0, brook-bench neither failed nor aborted, resident
memory grown less than 5% over the warm server in all and less than 1% over the last 20 minutes
(the run's second half when it is shorter), and the greedy request answers exactly as before.
It prints where the resident memory is, by kind of mapping (/proc/PID/smaps), when warm and at
the end, so a growth names its place: the main heap, malloc's per-thread arenas, thread stacks, or
the large mappings (weights, KV cache).

  bench/soak.py --bin build/bin --model /tmp/tiny --duration 1800 --warmup 120 --server-arg=--num-kv-blocks=1024
Exit status 0 when every check passes. Stdlib only.
"""
import argparse, json, os, random, re, socket, subprocess, sys, threading, time


def http(port, method, path, body=None, headers=None, timeout=60):
    conn = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    for k, v in (headers or {}).items():
        head += f"{k}: {v}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    conn.sendall(head.encode() + b"\r\n" + data)
    chunks = []
    while True:
        try:
            c = conn.recv(65536)
        except socket.timeout:
            break
        if not c:
            break
        chunks.append(c)
    conn.close()
    raw = b"".join(chunks)
    status = int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/") else 0
    return status, raw.split(b"\r\n\r\n", 1)[-1]


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def rss_by_kind(pid):
    """Resident KiB per kind of mapping. malloc's arenas are 64 MiB-aligned reservations of at most
    64 MiB; thread stacks are 8 MiB anonymous mappings (glibc's default) behind a guard page;
    mappings of 256 MiB and more are the weights and the KV cache."""
    kinds = {"heap": 0, "arenas": 0, "stacks": 0, "kv+weights": 0, "files": 0, "other": 0}
    kind = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                size, path = hi - lo, (head[5] if len(head) > 5 else "")
                if path == "[heap]":
                    kind = "heap"
                elif size >= 256 << 20:
                    kind = "kv+weights"
                elif path.startswith("/"):
                    kind = "files"
                elif path == "" and size == 8 << 20:
                    kind = "stacks"
                elif path == "" and lo % (64 << 20) == 0 and size <= 64 << 20:
                    kind = "arenas"
                else:
                    kind = "other"
            elif head[0] == "Rss:" and kind:
                kinds[kind] += int(head[1])
    return kinds


class RssSampler:
    """RSS every `every` seconds while the soak runs, for the growth over its last minutes."""

    def __init__(self, pid, every):
        self.pid, self.every, self.samples = pid, every, []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        start = time.monotonic()
        while True:
            self.samples.append((time.monotonic() - start, rss_kb(self.pid)))
            if self.stop.wait(self.every):
                return

    def growth_since(self, seconds_before_end, window=60):
        """Percent growth over the last `seconds_before_end` seconds: the median RSS of the final
        `window` seconds against the median of the `window` seconds where that span starts. Medians,
        not single samples: the server trims its heap every 10 s, and one sample taken just before a
        trim and one just after would differ by what the trim returned."""
        end_t = self.samples[-1][0]
        start_t = end_t - seconds_before_end
        def median_near(t0, t1):
            values = sorted(r for t, r in self.samples if t0 <= t <= t1)
            return values[len(values) // 2] if values else None
        start_rss = median_near(start_t, start_t + window) or min(self.samples, key=lambda s: abs(s[0] - start_t))[1]
        end_rss = median_near(end_t - window, end_t) or self.samples[-1][1]
        return (end_rss - start_rss) / start_rss * 100, seconds_before_end


def metric(port, name):
    _, text = http(port, "GET", "/metrics")
    values = [float(m.group(1)) for m in re.finditer(rf"^{re.escape(name)}(?:{{[^}}]*}})? ([0-9.eE+-]+)$", text.decode(), re.M)]
    return sum(values)


def bench_seconds(stdout):
    """brook-bench's 'Benchmark duration (s)': a run that ran out of prompts stops early."""
    m = re.search(r"Benchmark duration \(s\):\s+([0-9.]+)", stdout)
    return float(m.group(1)) if m else 0.0


def greedy(port):
    status, body = http(port, "POST", "/v1/chat/completions", {
        "model": "soak", "messages": [{"role": "user", "content": "Tell me about rivers."}],
        "temperature": 0, "max_tokens": 48, "ignore_eos": True, "skip_special_tokens": False, "seed": 1})
    if status != 200:
        raise SystemExit(f"greedy request failed: {status} {body[:200]!r}")
    return json.loads(body)["choices"][0]["message"]["content"]


class Mixer:
    """The hostile traffic that runs beside brook-bench serve."""

    def __init__(self, port, stop, flood):
        self.port, self.stop, self.flood = port, stop, flood
        self.counts = {"disconnects": 0, "bad_inputs": 0, "bad_input_5xx": 0, "flood_sockets": 0, "errors": 0}
        self.lock = threading.Lock()

    def count(self, key, n=1):
        with self.lock:
            self.counts[key] += n

    def disconnects(self):
        rng = random.Random(1)
        while not self.stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                body = json.dumps({"model": "soak", "stream": True, "max_tokens": rng.randint(8, 256),
                                   "messages": [{"role": "user", "content": "story " * rng.randint(1, 200)}]}).encode()
                s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
                want = rng.randint(0, 4000)  # bytes of the stream to read before hanging up (0: at once)
                got = 0
                while got < want:
                    c = s.recv(min(4096, want - got))
                    if not c:
                        break
                    got += len(c)
                s.close()
                self.count("disconnects")
            except OSError:
                self.count("errors")
            time.sleep(rng.random() * 0.05)

    def bad_inputs(self):
        bodies = [b"{", b"[]", b"null", b'{"messages": 5}', b'{"messages": [{"role": "user", "content": [{"type": 5}]}]}',
                  b'{"prompt": "x", "max_tokens": 1e400}', b'{"prompt": "x", "response_format": {"type": 5}}',
                  b'{"prompt": "x", "stop": ' + json.dumps(["s"] * 5000).encode() + b"}",
                  b'{"prompt": "x", "temperature": "hot"}', b'{"prompt": "' + b"\xff\xfe" * 100 + b'"}',
                  json.dumps({"messages": [{"role": "user", "content": "<|end_of_sentence|>" * 50}], "max_tokens": 2}).encode()]
        rng = random.Random(2)
        while not self.stop.is_set():
            for _ in range(50):  # a burst
                try:
                    kind = rng.randint(0, 5)
                    if kind == 0:
                        status, _ = http(self.port, "POST", "/v1/chat/completions", rng.choice(bodies))
                    elif kind == 1:
                        status, _ = http(self.port, "POST", "/v1/completions", b"x" * 100,
                                         {"Content-Encoding": "gzip"})
                    elif kind == 2:
                        status, _ = http(self.port, "PUT", "/v1/models", b"{}")
                    elif kind == 3:
                        status, _ = http(self.port, "GET", "/v1/" + "a" * 10000)
                    elif kind == 4:
                        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n")
                        raw = s.recv(4096)
                        s.close()
                        status = int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/") else 0
                    else:
                        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                        try:
                            for _ in range(64):  # 64 MiB, past the body limit
                                s.sendall(b"100000\r\n" + b"a" * 0x100000 + b"\r\n")
                        except OSError:
                            pass
                        raw = s.recv(4096)
                        s.close()
                        status = int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/") else 0
                    self.count("bad_inputs")
                    if status >= 500:
                        self.count("bad_input_5xx")
                except OSError:
                    self.count("errors")
            self.stop.wait(20)

    def slow_flood(self):
        sockets = []
        for _ in range(self.flood):
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                s.sendall(b"POST /v1/completions HTTP/1.1\r\n")
                sockets.append(s)
            except OSError:
                self.count("errors")
        self.count("flood_sockets", len(sockets))
        while not self.stop.is_set() and sockets:
            for s in list(sockets):
                try:
                    s.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    sockets.remove(s)  # the server closed it (header deadline): as it should
            self.stop.wait(5)
        for s in sockets:
            s.close()


def drain(port):
    for _ in range(300):
        if metric(port, "vllm:num_requests_running") == 0 and metric(port, "vllm:num_requests_waiting") == 0:
            return
        time.sleep(0.1)


def run_mix(a, port, seconds):
    """brook-bench serve for `seconds`, with the hostile mix beside it; returns its result and the mix's counts."""
    stop = threading.Event()
    mixer = Mixer(port, stop, a.flood)
    threads = [threading.Thread(target=f, daemon=True) for f in (mixer.disconnects, mixer.bad_inputs, mixer.slow_flood)]
    for t in threads:
        t.start()
    bench = subprocess.run([os.path.join(a.bin, "brook-bench"), "serve", "--base-url", f"http://127.0.0.1:{port}",
                            "--endpoint", "/v1/chat/completions", "--num-prompts", "1000000",
                            "--max-concurrency", str(a.concurrency), "--duration", str(seconds),
                            "--random-input-len", "128", "--random-output-len", "64"],
                           capture_output=True, text=True)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    return bench, mixer.counts


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="build/bin")
    p.add_argument("--model", required=True)
    p.add_argument("--duration", type=int, default=1800)
    p.add_argument("--warmup", type=int, default=120, help="seconds of the same mix before the baseline RSS")
    p.add_argument("--sample-every", type=float, default=10, help="seconds between RSS samples")
    p.add_argument("--tail", type=int, default=1200, help="the late window whose growth must stay under 1%%")
    p.add_argument("--server-arg", action="append", default=[], help="more brook-serve flags (repeatable)")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--server-log", default="/tmp/brook-soak-server.log", help="brook-serve's output")
    p.add_argument("--flood", type=int, default=1000)
    a = p.parse_args()

    log_path = a.server_log
    log = open(log_path, "w")
    server = subprocess.Popen([os.path.join(a.bin, "brook-serve"), a.model, "--served-model-name", "soak", "--port", "0",
                               "--device", "cpu", "--max-model-len", "1024", *a.server_arg],
                              stdout=log, stderr=subprocess.STDOUT)
    port = None
    for _ in range(600):
        time.sleep(0.1)
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(log_path).read())
        if m:
            port = int(m.group(1))
            break
    if not port:
        server.kill()
        raise SystemExit(f"brook-serve did not start; see {log_path}")
    try:
        for _ in range(600):  # listening comes before the model has loaded
            if http(port, "GET", "/health")[0] == 200:
                break
            time.sleep(0.1)
        before_answer = greedy(port)
        # Warm-up: the same mix for a while, so every KV block, allocator arena and worker-thread
        # stack has been touched once; growth after that is what a leak would show.
        bench, counts = run_mix(a, port, a.warmup)
        if bench.returncode != 0:
            raise SystemExit(f"warm-up failed: {bench.stderr[-800:]}")
        drain(port)
        rss_before = rss_kb(server.pid)
        kinds_before = rss_by_kind(server.pid)
        print(f"warm ({a.warmup} s of the mix): RSS {rss_before / 1024:.1f} MiB; greedy answer {len(before_answer)} chars",
              flush=True)

        sampler = RssSampler(server.pid, a.sample_every)
        sampler.thread.start()
        bench, counts = run_mix(a, port, a.duration)
        sampler.stop.set()
        sampler.thread.join()
        print(bench.stdout[-1500:], flush=True)
        if bench.returncode != 0:
            print(bench.stderr[-1500:])

        drain(port)
        running = metric(port, "vllm:num_requests_running")
        waiting = metric(port, "vllm:num_requests_waiting")
        kv = metric(port, "vllm:kv_cache_usage_perc")
        after_answer = greedy(port)
        rss_after = rss_kb(server.pid)
        kinds_after = rss_by_kind(server.pid)
        sampler.samples.append((sampler.samples[-1][0] + 1, rss_after))
        growth = (rss_after - rss_before) / rss_before * 100
        tail = min(a.tail, a.duration // 2)
        late, late_span = sampler.growth_since(tail)
        checks = {
            "brook-bench serve ran": bench.returncode == 0,
            f"the load ran the whole {a.duration} s ({bench_seconds(bench.stdout):.0f} s)":
                bench_seconds(bench.stdout) >= 0.98 * a.duration,
            "brook-bench did not abort": bench.returncode >= 0 and "terminate called" not in bench.stderr,
            "0 requests running": running == 0,
            "0 requests waiting": waiting == 0,
            "KV-cache usage 0": kv == 0,
            f"RSS growth {growth:+.2f}% < 5%": growth < 5,
            f"RSS growth over the last {late_span:.0f} s {late:+.2f}% < 1%": late < 1,
            "greedy answer unchanged": after_answer == before_answer,
            "no bad input answered 5xx": counts["bad_input_5xx"] == 0,
            "server alive": server.poll() is None,
        }
        print(f"mixed in: {counts}")
        print(f"RSS {rss_before / 1024:.1f} -> {rss_after / 1024:.1f} MiB")
        print("RSS by kind, MiB (warm -> end): " + ", ".join(
            f"{k} {kinds_before[k] / 1024:.1f} -> {kinds_after[k] / 1024:.1f}" for k in kinds_before))
        print("RSS samples, MiB every %g s: %s" % (a.sample_every, " ".join(f"{r / 1024:.0f}" for _, r in sampler.samples)))
        for name, ok in checks.items():
            print(("ok: " if ok else "FAIL: ") + name)
        return 0 if all(checks.values()) else 1
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    sys.exit(main())
