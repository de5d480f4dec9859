"""The noise floor of this machine: how much does the *same simple work* vary from one run to the next?

    uv run python scripts/measure_machine_noise.py [--kind cpu scan alloc] [--processes 12] [--iterations 20]
                                                   [--ms 100] [--cpu N] [--show-iterations] [--designs BLOCKS]

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
`--show-iterations` prints each process's iteration times, with its CPU.

`--designs BLOCKS` instead runs BLOCKS A/A blocks of two such processes (5 iterations each) in three designs
and prints the spread of the blocks' log-ratio of medians for each: A then B on one CPU (what colbench does),
A and B at the same time on two CPUs (sides swapped every block), and A then B with the other CPU kept busy.
It tells whether the machine's speed changes hit both CPUs alike (then side by side would cancel them) and
whether a busy sibling holds the speed.
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
from colbench.machine.facts import read_steal_seconds
from colbench.runner.isolate import choose_cpus

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

def _start(kind: str, size: int, iterations: int, cpu: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, kind, str(size), str(iterations)],
                            stdout=subprocess.PIPE, text=True, preexec_fn=lambda: os.sched_setaffinity(0, [cpu]))


def _times(child: subprocess.Popen[str]) -> list[float]:
    out, _ = child.communicate()
    if child.returncode:
        raise SystemExit(f"a timing process failed with exit code {child.returncode}")
    return json.loads(out)


def _run(kind: str, size: int, iterations: int, cpu: int) -> list[float]:
    return _times(_start(kind, size, iterations, cpu))


def calibrate(kind: str, ms: float, cpu: int) -> int:
    """Loop count (cpu) or bytes (scan, alloc) for about `ms` milliseconds on this CPU."""
    probe = {"cpu": 1_000_000, "scan": 1 << 30, "alloc": 64 << 20}[kind]
    per_unit = statistics.median(_run(kind, probe, 3, cpu)) / probe
    return max(1000, int(ms / 1000 / per_unit))


def measure(kind: str, args: argparse.Namespace, cpu: int) -> None:
    size = calibrate(kind, args.ms, cpu)
    steal0, load0 = read_steal_seconds(), os.getloadavg()[0]
    procs = [[math.log(t) for t in _run(kind, size, args.iterations, cpu)] for _ in range(args.processes)]
    if args.show_iterations:
        for p in procs:
            print(f"  CPU {cpu}: " + ", ".join(f"{math.exp(x) * 1e3:.0f}" for x in p) + " ms")
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


ONE_AFTER_THE_OTHER = "one after the other"
SIDE_BY_SIDE = "side by side"
SIBLING_BUSY = "one after the other, sibling busy"


def _block_log_ratio(design: str, kind: str, size: int, block: int, cpus: list[int]) -> float:
    """log(median B / median A) of one A/A block of two processes of 5 iterations, in `design`."""
    if design == SIDE_BY_SIDE:
        first, second = (cpus[0], cpus[1]) if block % 2 == 0 else (cpus[1], cpus[0])
        a, b = _start(kind, size, 5, first), _start(kind, size, 5, second)
        return math.log(statistics.median(_times(b)) / statistics.median(_times(a)))
    spinner = None
    if design == SIBLING_BUSY:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                   preexec_fn=lambda: os.sched_setaffinity(0, [cpus[1]]))
    try:
        a = statistics.median(_run(kind, size, 5, cpus[0]))
        b = statistics.median(_run(kind, size, 5, cpus[0]))
    finally:
        if spinner:
            spinner.kill()
            spinner.wait()
    return math.log(b / a)


def compare_designs(kind: str, blocks: int, ms: float, cpus: list[int]) -> None:
    size = calibrate(kind, ms, cpus[0])
    designs = (ONE_AFTER_THE_OTHER, SIDE_BY_SIDE, SIBLING_BUSY)
    ratios: dict[str, list[float]] = {d: [] for d in designs}
    load0 = os.getloadavg()[0]
    for block in range(blocks):
        for design in designs:  # interleaved, so the machine's mood hits the three alike
            ratios[design].append(_block_log_ratio(design, kind, size, block, cpus))
    print(f"{kind}: {blocks} A/A blocks per design on CPUs {cpus[0]} and {cpus[1]} "
          f"(load average {load0:.2f} -> {os.getloadavg()[0]:.2f})")
    for design in designs:
        print(f"  {design:<34} spread of the block log-ratio {statistics.stdev(ratios[design]):.1%}, "
              f"mean {statistics.mean(ratios[design]):+.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--ms", type=float, default=100.0, help="duration of one iteration")
    parser.add_argument("--kind", nargs="+", choices=("cpu", "scan", "alloc"), default=["cpu", "scan", "alloc"])
    parser.add_argument("--cpu", type=int, help="CPU to pin to (default: colbench's choice for one thread)")
    parser.add_argument("--show-iterations", action="store_true", help="print every process's iteration times")
    parser.add_argument("--designs", type=int, metavar="BLOCKS",
                        help="compare three A/A block designs over BLOCKS blocks instead")
    args = parser.parse_args()
    cpu = args.cpu if args.cpu is not None else (choose_cpus(1)[0] or [0])[0]
    if args.designs is not None:
        if args.designs < 2:
            raise SystemExit("--designs needs at least 2 blocks (a spread of one block is undefined)")
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) < 2:
            raise SystemExit("--designs needs two CPUs")
        others = [c for c in allowed if c != cpu]
        for kind in args.kind:
            compare_designs(kind, args.designs, args.ms, [cpu, others[0]])
        return
    for kind in args.kind:
        measure(kind, args, cpu)

if __name__ == "__main__":
    main()
