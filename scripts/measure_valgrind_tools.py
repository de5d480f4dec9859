"""What one call costs under each Valgrind tool that could count it: the floor of a counting process (#46).

    uv run python scripts/measure_valgrind_tools.py [--calls 8] [--rows 100000]

One interpreter per tool reads a snappy Parquet file of `--rows` rows (10 integer columns and a string one, made in
memory, one thread) `--calls` times, `gc.collect()` before each read as colbench's worker does, and prints each
read's CPU seconds (`getrusage` inside the process) and each collection's: natively, under `--tool=none` (Valgrind's
translation alone), `--tool=callgrind` with the options colbench counts with (instrumented from the start: the
steady state of a counting process's calls), `--tool=cachegrind --cache-sim=no`, and `--tool=exp-bbv`. Only
callgrind can count one call in Valgrind 3.19 (client requests to zero and dump its counters); cachegrind has its
own start/stop requests from Valgrind 3.22 on. Read the figures as ratios within one run: the VM's CPU changes
speed (docs/gating.md).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys

PROBE = """
import gc, io, resource, sys
import numpy as np
import pyarrow as pa, pyarrow.parquet as pq

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

rows, calls = int(sys.argv[1]), int(sys.argv[2])
pa.set_cpu_count(1)
table = pa.table({**{f"c{i}": np.arange(rows) * i for i in range(10)}, "s": pa.array([str(i) for i in range(rows)])})
sink = io.BytesIO()
pq.write_table(table, sink, compression="snappy")
data = sink.getvalue()
for _ in range(calls):
    started = cpu()
    gc.collect()
    collected = cpu()
    pq.read_table(pa.BufferReader(data), use_threads=False)
    print(f"{collected - started:.4f} {cpu() - collected:.4f}", flush=True)
"""

TOOLS = {
    "native": [],
    "none": ["--tool=none"],
    "callgrind": ["--tool=callgrind", "--separate-threads=no", "--dump-line=no", "--callgrind-out-file=/dev/null"],
    "cachegrind --cache-sim=no": ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"],
    "exp-bbv": ["--tool=exp-bbv", "--bb-out-file=/dev/null"],
}


def measure(prefix: list[str], rows: int, calls: int) -> list[tuple[float, float]]:
    done = subprocess.run([*prefix, sys.executable, "-c", PROBE, str(rows), str(calls)], capture_output=True,
                          text=True, check=True)
    return [(float(a), float(b)) for a, b in (line.split() for line in done.stdout.splitlines())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind not found: install it (Debian/Ubuntu: apt-get install valgrind)")
    version = subprocess.run([valgrind, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version}; {args.calls} reads of {args.rows:,} rows each; CPU seconds a call (getrusage)")
    print(f"{'tool':<26} {'first read':>10} {'later reads, median':>20} {'x native':>9} {'gc.collect':>11}")
    native = None
    for tool, options in TOOLS.items():
        figures = measure([valgrind, *options] if options else [], args.rows, args.calls)
        later = statistics.median(read for _, read in figures[1:])
        native = native or later
        collect = statistics.median(gc for gc, _ in figures[1:])
        print(f"{tool:<26} {figures[0][1]:>9.3f}s {later:>19.3f}s {later / native:>8.1f}x {collect:>10.3f}s")


if __name__ == "__main__":
    main()
