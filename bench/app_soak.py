#!/usr/bin/env python3
"""Long run of the desktop app (docs/benchmarks.md, "Reliability").

Starts the app (`brook --model MODEL --serve --port 0`, a fresh --data-dir) with its window on
QT_QPA_PLATFORM (default offscreen; xcb under Xvfb works the same), waits for its local endpoint,
then streams long replies through the app's own engine for DURATION seconds with `brook-bench
serve` against that endpoint (CONCURRENCY chats at once, OUTPUT_LEN tokens each), after a warm-up
of the same load. RSS is sampled every --sample-every seconds. The app's EventLoopLagMonitor logs
a warning whenever the GUI thread runs its event loop more than 100 ms late; the run counts them.

Checks: the load generator ran, the app is alive, resident memory grew less than 5% over the warm
app and less than 1% over the last --tail seconds (the run's second half when it is shorter), and
no GUI-thread stall over 100 ms.

  bench/app_soak.py --bin build/bin --model /tmp/tiny --duration 7200 --warmup 300
Exit status 0 when every check passes. Stdlib only.
"""
import argparse, os, re, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak import RssSampler, bench_seconds, http, rss_by_kind, rss_kb  # noqa: E402


def bench(a, port, seconds):
    return subprocess.run([os.path.join(a.bin, "brook-bench"), "serve", "--base-url", f"http://127.0.0.1:{port}",
                           "--endpoint", "/v1/chat/completions", "--num-prompts", "1000000",
                           "--max-concurrency", str(a.concurrency), "--duration", str(seconds),
                           "--random-input-len", "128", "--random-output-len", str(a.output_len)],
                          capture_output=True, text=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="build/bin")
    p.add_argument("--model", required=True)
    p.add_argument("--duration", type=int, default=7200)
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--sample-every", type=float, default=10)
    p.add_argument("--tail", type=int, default=1200, help="the late window whose growth must stay under 1%%")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--output-len", type=int, default=512)
    p.add_argument("--log", default="/tmp/brook-app-soak.log", help="the app's output")
    a = p.parse_args()

    data = tempfile.mkdtemp(prefix="brook-app-soak-")
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    log = open(a.log, "w")
    app = subprocess.Popen([os.path.join(a.bin, "brook"), "--model", os.path.abspath(a.model), "--data-dir", data,
                            "--serve", "--port", "0"], stdout=log, stderr=subprocess.STDOUT, env=env)
    port = None
    for _ in range(1200):
        time.sleep(0.1)
        m = re.search(r"local endpoint: http://[^:]+:(\d+)/v1", open(a.log, errors="replace").read())
        if m:
            port = int(m.group(1))
            break
        if app.poll() is not None:
            break
    if not port:
        app.kill()
        raise SystemExit(f"the app's endpoint did not start; see {a.log}")
    try:
        if http(port, "GET", "/health")[0] != 200:
            raise SystemExit("the app's endpoint does not answer /health")
        warm = bench(a, port, a.warmup)
        if warm.returncode != 0:
            raise SystemExit(f"warm-up failed: {warm.stderr[-800:]}")
        stalls_warm = open(a.log, errors="replace").read().count("GUI thread stalled")
        rss_before = rss_kb(app.pid)
        kinds_before = rss_by_kind(app.pid)
        print(f"warm ({a.warmup} s): RSS {rss_before / 1024:.1f} MiB; {stalls_warm} GUI stalls during the warm-up",
              flush=True)

        sampler = RssSampler(app.pid, a.sample_every)
        sampler.thread.start()
        run = bench(a, port, a.duration)
        sampler.stop.set()
        sampler.thread.join()
        print(run.stdout[-1500:], flush=True)
        if run.returncode != 0:
            print(run.stderr[-1500:])

        rss_after = rss_kb(app.pid)
        kinds_after = rss_by_kind(app.pid)
        sampler.samples.append((sampler.samples[-1][0] + 1, rss_after))
        text = open(a.log, errors="replace").read()
        lags = [int(x) for x in re.findall(r"GUI thread stalled: the event loop ran (\d+) ms late", text)]
        stalls = lags[stalls_warm:]
        growth = (rss_after - rss_before) / rss_before * 100
        tail = min(a.tail, a.duration // 2)
        late, late_span = sampler.growth_since(tail)
        checks = {
            "brook-bench serve ran": run.returncode == 0,
            f"the load ran the whole {a.duration} s ({bench_seconds(run.stdout):.0f} s)":
                bench_seconds(run.stdout) >= 0.98 * a.duration,
            "the app is alive": app.poll() is None,
            f"RSS growth {growth:+.2f}% < 5%": growth < 5,
            f"RSS growth over the last {late_span:.0f} s {late:+.2f}% < 1%": late < 1,
            f"GUI-thread stalls over 100 ms: {len(stalls)} (worst {max(stalls, default=0)} ms)": not stalls,
        }
        print(f"RSS {rss_before / 1024:.1f} -> {rss_after / 1024:.1f} MiB")
        print("RSS by kind, MiB (warm -> end): " + ", ".join(
            f"{k} {kinds_before[k] / 1024:.1f} -> {kinds_after[k] / 1024:.1f}" for k in kinds_before))
        print("RSS samples, MiB every %g s: %s" % (a.sample_every, " ".join(f"{r / 1024:.0f}" for _, r in sampler.samples)))
        for name, ok in checks.items():
            print(("ok: " if ok else "FAIL: ") + name)
        return 0 if all(checks.values()) else 1
    finally:
        app.terminate()
        try:
            app.wait(timeout=30)
        except subprocess.TimeoutExpired:
            app.kill()


if __name__ == "__main__":
    sys.exit(main())
