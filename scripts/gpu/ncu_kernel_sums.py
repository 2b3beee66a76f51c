"""Sums an ncu CSV (--csv --page raw --print-units base, metrics gpu__time_duration.sum and
dram__bytes_read.sum) by kernel name: launches, time and DRAM read rate, then the total kernel
time, which compared with the step's wall or event time says how much of it is launch gaps."""
import collections
import csv
import sys

rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if 'Kernel Name' in r)
names = rows[head]
k, t, b = names.index('Kernel Name'), names.index('gpu__time_duration.sum'), names.index('dram__bytes_read.sum')
sums = collections.defaultdict(lambda: [0, 0.0, 0.0])
total, launches = 0.0, 0
for r in rows[head + 2:]:
    try:
        ns = float(r[t].replace(',', ''))
        by = float(r[b].replace(',', ''))
    except ValueError:
        continue
    name = r[k].split('(')[0][:90]
    s = sums[name]
    s[0] += 1
    s[1] += ns
    s[2] += by
    total += ns
    launches += 1
print(f"{'kernel':90s} {'n':>4s} {'us':>9s} {'GB/s':>7s}")
for name, (n, ns, by) in sorted(sums.items(), key=lambda x: -x[1][1]):
    print(f"{name:90s} {n:4d} {ns/1e3:9.1f} {by/ns if ns else 0:7.0f}")
print(f"sum of kernel times: {total/1e3:.1f} us over {launches} launches")
