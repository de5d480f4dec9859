"""Does what the worker does around a timed call slow the call? (docs/asv.md: pyarrow's sub-millisecond asv cases
took 1.24x asv's figure)

    uv run python scripts/measure_timed_call_disturbance.py [--rounds 20] [--calls 200]

Times one short call, a pandas frame of 10 floats converted to an Arrow table (about 0.2 ms, as the 10-row cases
of pyarrow's asv suite's pandas conversions), in one interpreter, with its frame made anew before each call (asv's
setup re-run), in rounds that alternate the variants so that the CPU's speed (it switches between
two on the reference VM, docs/gating.md) hits each alike:

- plain: the clock around the call, nothing else (asv's timer does no more);
- getrusage: the worker's CPU-time reads before and after the call;
- /proc listed: the worker's run-delay reads until 29 Nov 2026, every thread's schedstat listed and opened before
  and after the call;
- /proc kept open: the worker's reader now (`worker._RunDelay`: files kept open, listed again only when the thread
  count changes), which the worker still uses for calls of 10 ms and more;
- asv's timer: what `timeit.Timer.timeit(1)` with asv's `redo_setup` as its setup does, the garbage collector off
  from before the setup to after the call;
- the worker: what a sub-10-ms asv call gets from colbench's worker (`worker._timed` around `AsvBenchmark.run`):
  the setup with the collector on, getrusage, then the collector off around the call only.

Prints each variant's median call (the median over rounds of each round's median) and its excess over plain.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from colbench.workers.python.worker import _cpu_times, _RunDelay


def listed_run_delay_ns() -> int:
    """The worker's run-delay read until 29 Nov 2026: every thread's schedstat listed and opened."""
    total = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/schedstat", "rb") as f:
                total += int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total


def asv_timer(setup: Callable[[], None], call: Callable[[], None]) -> Callable[[], int]:
    """`timeit.Timer.timeit(1)` with asv's `redo_setup` as its setup: the collector off over the setup and the call."""
    def timed() -> int:
        collecting = gc.isenabled()
        gc.disable()
        try:
            setup()
            t0 = time.perf_counter_ns()
            call()
            return time.perf_counter_ns() - t0
        finally:
            if collecting:
                gc.enable()
    return timed


def worker(setup: Callable[[], None], call: Callable[[], None]) -> Callable[[], int]:
    """`worker._timed` around `AsvBenchmark.run`: the setup with the collector on, getrusage, the collector off
    around the call only."""
    def timed() -> int:
        setup()
        _cpu_times()
        t0 = time.perf_counter_ns()
        collecting = gc.isenabled()
        gc.disable()
        try:
            call()
        finally:
            if collecting:
                gc.enable()
        t1 = time.perf_counter_ns()
        _cpu_times()
        return t1 - t0
    return timed


def variants() -> dict[str, Callable[[], int]]:
    state: dict[str, pd.DataFrame] = {}
    kept = _RunDelay()

    def setup() -> None:
        state["frame"] = pd.DataFrame({"x": np.arange(10, dtype="float64")})

    def call() -> None:
        pa.Table.from_pandas(state["frame"])

    def plain() -> int:
        setup()
        t0 = time.perf_counter_ns()
        call()
        return time.perf_counter_ns() - t0

    def getrusage() -> int:
        setup()
        _cpu_times()
        t0 = time.perf_counter_ns()
        call()
        t1 = time.perf_counter_ns()
        _cpu_times()
        return t1 - t0

    def proc_listed() -> int:
        setup()
        listed_run_delay_ns()
        _cpu_times()
        t0 = time.perf_counter_ns()
        call()
        t1 = time.perf_counter_ns()
        _cpu_times()
        listed_run_delay_ns()
        return t1 - t0

    def proc_kept_open() -> int:
        setup()
        before = kept.read()
        _cpu_times()
        t0 = time.perf_counter_ns()
        call()
        t1 = time.perf_counter_ns()
        _cpu_times()
        kept.since(before)
        return t1 - t0

    return {"plain": plain, "getrusage": getrusage, "/proc listed": proc_listed, "/proc kept open": proc_kept_open,
            "asv's timer": asv_timer(setup, call), "the worker": worker(setup, call)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=200, help="calls of a variant in one round")
    args = parser.parse_args()
    timed = variants()
    for _ in range(2000):  # warm: imports, caches, the CPU's clock
        timed["plain"]()
    medians: dict[str, list[float]] = {name: [] for name in timed}
    names = list(timed)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            medians[name].append(statistics.median(timed[name]() for _ in range(args.calls)))
    plain = statistics.median(medians["plain"])
    print(f"{args.rounds} rounds of {args.calls} calls a variant, alternating; load {os.getloadavg()[0]:.1f}")
    for name, values in medians.items():
        median = statistics.median(values)
        excess = "" if name == "plain" else f", {median / plain - 1:+.1%} ({(median - plain) / 1e3:+.1f} µs)"
        print(f"{name:16s} {median / 1e3:7.1f} µs (rounds {min(values) / 1e3:.1f}-{max(values) / 1e3:.1f}){excess}")


if __name__ == "__main__":
    main()
