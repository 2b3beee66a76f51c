#!/usr/bin/env python3
"""Medians of a compare.sh log: per weight format, llama.cpp's pp128 / tg32 and Brook's prompt
and decode rates, each round's figure first (llama-bench: the mean of its repetitions; Brook: the
median of the latency command's three runs), then the median over rounds and Brook / llama.cpp.

Brook's prompt rate is 128 tokens over its TTFT, which also includes the first token's sampling
and the request's way through the engine: llama-bench's pp128 times the prompt's forward only.

Usage: summarize.py LOG
"""
import re
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    rates = defaultdict(list)  # (format, "llama.cpp pp128" | ...) -> per-round values
    read_rates, section, runs = [], None, []

    def close_brook_section():
        if section and section[0] == "brook" and runs:
            rates[(section[1], "brook prompt")].append(statistics.median(128e3 / ttft for ttft, _ in runs))
            rates[(section[1], "brook decode")].append(statistics.median(decode for _, decode in runs))

    for line in open(sys.argv[1], encoding="utf-8"):
        if m := re.search(r"memory read, .*median ([\d.]+) GB/s", line):
            read_rates.append(float(m.group(1)))
        elif m := re.search(r":: (llama\.cpp|brook) (\S+)$", line.strip()):
            close_brook_section()
            section, runs = (m.group(1), {"q8_0": "int8", "q4_0": "int4"}.get(m.group(2), m.group(2))), []
        elif m := re.search(r"\|\s+(pp128|tg32 @ d128)\s+\|\s+([\d.]+)", line):
            rates[(section[1], "llama.cpp " + m.group(1).split()[0])].append(float(m.group(2)))
        elif m := re.match(r"run \d+: TTFT ([\d.]+) ms, decode ([\d.]+) tokens/s", line):
            runs.append((float(m.group(1)), float(m.group(2))))
        elif line.startswith("=="):
            close_brook_section()
            section = None
    close_brook_section()

    print(f"memory read rate per round (GB/s): {', '.join(f'{r:.1f}' for r in read_rates)}")
    print("| weights | measure | llama.cpp (tok/s) | Brook (tok/s) | Brook / llama.cpp |")
    print("| --- | --- | --- | --- | --- |")
    for fmt in ("bf16", "int8", "int4"):
        for measure, llama_key, brook_key in (("prompt of 128", "llama.cpp pp128", "brook prompt"),
                                               ("decode at context 128", "llama.cpp tg32", "brook decode")):
            a, b = rates.get((fmt, llama_key)), rates.get((fmt, brook_key))
            if not a or not b:
                continue
            ma, mb = statistics.median(a), statistics.median(b)
            each = lambda xs: " / ".join(f"{x:.1f}" for x in xs)
            print(f"| {fmt} | {measure} | {ma:.1f} ({each(a)}) | {mb:.1f} ({each(b)}) | {mb / ma:.2f}x |")


if __name__ == "__main__":
    main()
