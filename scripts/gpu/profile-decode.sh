#!/usr/bin/env bash
# On the GPU machine, after `source scripts/gpu/env.sh` and a build of brook-step-bench in
# build-gpu/: profiles ONE decode step (graph nodes one by one) of batch size $2 at context $3 (default 256) with ncu and
# prints the time per kernel, summed by kernel name. Output to $1 (a folder).
set -uo pipefail
out=${1:-/tmp/brook-profile}
batch=${2:-1}
context=${3:-256}
mkdir -p "$out"
ncu --profile-from-start off --graph-profiling node --clock-control none --csv --page raw --print-units base \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum \
    build-gpu/bin/brook-step-bench --batch "$batch" --context "$context" --iterations 5 --profile-step \
    > "$out/ncu-batch$batch.csv" 2> "$out/ncu-batch$batch.log"
python3 - "$out/ncu-batch$batch.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if 'Kernel Name' in r)
names = rows[head]
k, t, b = names.index('Kernel Name'), names.index('gpu__time_duration.sum'), names.index('dram__bytes_read.sum')
sums = collections.defaultdict(lambda: [0, 0.0, 0.0])
total = 0.0
for r in rows[head + 2:]:
    try: ns = float(r[t].replace(',', '')); by = float(r[b].replace(',', ''))
    except ValueError: continue
    name = r[k].split('(')[0][:90]
    s = sums[name]; s[0] += 1; s[1] += ns; s[2] += by; total += ns
print(f"{'kernel':90s} {'n':>4s} {'us':>9s} {'GB/s':>7s}")
for name, (n, ns, by) in sorted(sums.items(), key=lambda x: -x[1][1]):
    print(f"{name:90s} {n:4d} {ns/1e3:9.1f} {by/ns if ns else 0:7.0f}")
print(f"sum of kernel times: {total/1e3:.1f} us")
PY
