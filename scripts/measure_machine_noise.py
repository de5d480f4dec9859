"""The noise floor of this machine: how much does the *same simple work* vary from one run to the next?

    uv run python scripts/measure_machine_noise.py [--kind cpu scan alloc] [--processes 12] [--iterations 20]
                                                   [--ms 100] [--cpu N]

Per kind, --processes fresh Python processes one after the other, each pinned to one CPU (default: the CPU
colbench would pin a single-threaded worker to), each timing --iterations repetitions of fixed work sized to
about --ms milliseconds:

- `cpu`: an integer loop on a few small objects. No memory traffic, no I/O: its spread is what the CPU itself
  gives (frequency, a hypervisor taking the CPU, a neighbour on a sibling, interrupts);
- `scan`: sums over 256 MiB touched once before timing: caches, TLB and memory bandwidth;
- `alloc`: filling freshly allocated memory each time, as a reader building new columns does: page faults and
  page zeroing by the kernel, and where the (virtual) machine places the pages.

No benchmark doing that kind of work can be quieter than the floor printed here, and wall-time verdicts inherit
it (docs/gating.md). Prints, on the log scale (0.05 ~ 5%), the spread of iterations inside a process and of the
per-process medians, min/median/max, the CPU steal and the load average, and what the floor means for a paired
A/B gate: blocks needed to call a true 5% slowdown with 95% power at alpha 0.01 over 9 cases.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

from colbench.analysis.power import blocks_needed
from colbench.runner.isolate import choose_cpus
from colbench.runner.machine import read_steal_seconds

CHILD = r"""
import json, sys, time
kind, size, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if kind == "cpu":  # integer arithmetic on a few small objects: the CPU alone
    def work(n):
        total = 0
        for i in range(n):
            total += i * i
        return total
else:
    import numpy as np
    if kind == "scan":  # passes over 256 MiB touched once, before timing: caches, TLB and memory bandwidth
        data = np.ones(32 << 20, dtype=np.int64)
        def work(n):
            return sum(int(data.sum()) for _ in range(max(1, n // data.nbytes)))
    else:  # "alloc": fresh memory every time, as a reader building new columns gets it: page faults, zeroing
        def work(n):
            block = np.empty(n // 8, dtype=np.int64)
            block.fill(1)
            return int(block[:: 4096 // 8].sum())
work(size)
times = []
for _ in range(iterations):
    t = time.perf_counter(); work(size); times.append(time.perf_counter() - t)
print(json.dumps(times))
"""

def _run(kind: str, size: int, iterations: int, cpu: int) -> list[float]:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(size), str(iterations)], capture_output=True,
                         text=True, check=True, preexec_fn=lambda: os.sched_setaffinity(0, [cpu]))
    return json.loads(out.stdout)


def calibrate(kind: str, ms: float, cpu: int) -> int:
    """Loop count (cpu) or bytes (scan, alloc) for about `ms` milliseconds on this CPU."""
    probe = {"cpu": 1_000_000, "scan": 1 << 30, "alloc": 64 << 20}[kind]
    per_unit = statistics.median(_run(kind, probe, 3, cpu)) / probe
    return max(1000, int(ms / 1000 / per_unit))


def measure(kind: str, args: argparse.Namespace, cpu: int) -> None:
    size = calibrate(kind, args.ms, cpu)
    steal0, load0 = read_steal_seconds(), os.getloadavg()[0]
    procs = [[math.log(t) for t in _run(kind, size, args.iterations, cpu)] for _ in range(args.processes)]
    steal1 = read_steal_seconds()
    within = statistics.median(statistics.stdev(p) for p in procs)
    between = statistics.stdev(statistics.median(p) for p in procs)
    every = [math.exp(x) * 1e3 for p in procs for x in p]
    # a paired block's log-ratio has the variance of two process medians
    need = blocks_needed(math.sqrt(2) * between, 0.05, level=0.01 / 9, power=0.95)
    steal = f"{steal1 - steal0:.2f} s" if steal0 is not None and steal1 is not None else "n/a"
    what = {"cpu": "pure CPU loop", "scan": f"{max(1, size >> 28)} passes over 256 MiB touched once",
            "alloc": f"fresh {size / 2**20:.0f} MiB filled"}[kind]
    print(f"{what}, pinned to CPU {cpu}: {args.processes} processes x {args.iterations} iterations "
          f"(load average {load0:.2f} -> {os.getloadavg()[0]:.2f}, steal {steal})")
    print(f"  iteration time: min {min(every):.1f} ms, median {statistics.median(every):.1f} ms, "
          f"max {max(every):.1f} ms")
    print(f"  spread inside a process (median sd of log): {within:.2%}")
    print(f"  spread of process medians (sd of log):      {between:.2%}")
    print(f"  a paired gate at this floor needs {need} blocks to catch 5% with 95% power "
          f"(alpha 0.01 over 9 cases)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--ms", type=float, default=100.0, help="duration of one iteration")
    parser.add_argument("--kind", nargs="+", choices=("cpu", "scan", "alloc"), default=["cpu", "scan", "alloc"])
    parser.add_argument("--cpu", type=int, help="CPU to pin to (default: colbench's choice for one thread)")
    args = parser.parse_args()
    cpu = args.cpu if args.cpu is not None else (choose_cpus(1)[0] or [0])[0]
    for kind in args.kind:
        measure(kind, args, cpu)

if __name__ == "__main__":
    main()
