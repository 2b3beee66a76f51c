#!/usr/bin/env python3
"""Where a streamed request's time to first token goes over HTTP (issue 19): joins brook-serve's
"first token hops" debug lines with brook-bench serve's "stream ... sent at" debug lines (both
stamp the machine's monotonic clock, so they must run on the same machine) and prints the median
of every hop.

    brook-serve MODEL --log-level debug ... 2> serve.log &
    brook-bench serve --max-concurrency 1 --log-level debug ... 2> client.log
    bench/http_hops.py serve.log client.log

Meant for --max-concurrency 1: each server line is joined with the last request sent before its
first byte arrived.
"""
import re
import statistics
import sys

HOPS = [  # the server's hop names, in order, and what the time before each one is
    ("read", "first byte -> request in (head and body, checked)"),
    ("routed", "-> routed (cpp-httplib parse, pre-routing)"),
    ("json", "-> JSON parsed"),
    ("prompt", "-> fields checked, chat template, tokenized"),
    ("submitted", "-> Engine::submit returned"),
    ("engine-out", "-> engine thread hands over the first token"),
    ("http-woke", "-> HTTP thread woke with it"),
    ("sse-written", "-> SSE event(s) built and written"),
]


def parse_server(path):
    rows = []
    for line in open(path, errors="replace"):
        if "first token hops:" not in line:
            continue
        body = line.split("first token hops: ", 1)[1]
        row = {name: float(ms) for ms, name in re.findall(r"-([\d.]+)-> ([\w-]+)", body)}
        for key, pattern in [("tokenize", r"tokenize ([\d.]+) ms"), ("queue", r"engine queue ([\d.]+) ms"),
                             ("engine_ttft", r"engine TTFT ([\d.]+) ms"),
                             ("server_total", r"first byte to first event ([\d.]+) ms")]:
            m = re.search(pattern, body)
            row[key] = float(m.group(1)) if m else float("nan")
        m = re.search(r"first byte at (\d+) ns", body)
        if not m:
            continue
        row["first_byte_ns"] = int(m.group(1))
        rows.append(row)
    return rows


def parse_client(path):
    sent = []
    for line in open(path, errors="replace"):
        m = re.search(r"sent at (\d+) ns.*first body byte \+([-\d.]+) ms, first event \+([-\d.]+) ms", line)
        if m:
            sent.append((int(m.group(1)), float(m.group(2)), float(m.group(3))))
    return sorted(sent)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    server, client = parse_server(sys.argv[1]), parse_client(sys.argv[2])
    joined = []
    for row in server:
        before = [c for c in client if c[0] <= row["first_byte_ns"]]
        if not before:
            continue
        sent_ns, first_body_ms, first_event_ms = before[-1]
        send_to_first_byte = (row["first_byte_ns"] - sent_ns) / 1e6
        delivery = first_body_ms - send_to_first_byte - row["server_total"]
        joined.append((row, send_to_first_byte, delivery, first_event_ms))
    if not joined:
        sys.exit("no request could be joined: were both runs at --log-level debug, on this machine?")

    def med(values):
        return statistics.median(values)

    print(f"{len(joined)} requests, medians in ms")
    print(f"  {'client sends -> server has the first byte':<52} {med([j[1] for j in joined]):7.3f}")
    for name, label in HOPS:
        print(f"  {label:<52} {med([j[0].get(name, 0.0) for j in joined]):7.3f}")
    print(f"  {'server write -> client has the first body byte':<52} {med([j[2] for j in joined]):7.3f}")
    print(f"  {'client TTFT (send -> first event)':<52} {med([j[3] for j in joined]):7.3f}")
    print(f"  of which: tokenize {med([j[0]['tokenize'] for j in joined]):.3f}, "
          f"engine queue (submit -> scheduled) {med([j[0]['queue'] for j in joined]):.3f}, "
          f"engine TTFT (submit -> first token) {med([j[0]['engine_ttft'] for j in joined]):.3f}")


if __name__ == "__main__":
    main()
