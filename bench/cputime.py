#!/usr/bin/env python3
"""CPU time per op, robust to a loaded machine (wall-clock ns/op swings by
100% and more when other builds share the cores): each benchmark runs with a
fixed iteration count N1 and N2 (-test.benchtime=Nx, GOMAXPROCS=1), and
the CPU time (user+sys, getrusage of the child) of the difference is
divided by N2-N1, which cancels the process start and the setup. Old and
new binaries interleaved, reps times; the median is printed."""
# Usage: cputime.py CASES [REPS]; each line of CASES is
#   NAME BENCH-REGEXP N1 N2 DIR BINARY...
# (NAME@2 runs at GOMAXPROCS=2 -test.cpu 2), BINARY a `go test -c` binary
# run in DIR, e.g. old and new builds of bench/contend side by side.
import os, resource, subprocess, statistics, sys
def cpu(binary, bench, n, cwd, procs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, '-test.run', '^$', '-test.bench', bench, '-test.benchtime', f'{n}x', '-test.cpu', procs],
                   cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, GOMAXPROCS=procs), check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
cases = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith('#')]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
res = {}
for r in range(reps):
    for name, bench, n1, n2, cwd, *bins in cases:
        for b in bins:
            procs = name.split('@')[1] if '@' in name else '1'
            t1 = cpu(b, bench, int(n1), cwd, procs); t2 = cpu(b, bench, int(n2), cwd, procs)
            res.setdefault((name, b), []).append((t2 - t1) / (int(n2) - int(n1)) * 1e9)
for (name, b), v in res.items():
    print(f'{name:28s} {os.path.basename(b):12s} {statistics.median(v):8.2f} ns/op (cpu)  runs {" ".join(f"{x:.2f}" for x in v)}')
