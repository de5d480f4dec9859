"""Measure what one isolated execution costs: `placebo` with duration 0, spawn to result, over N processes.

    uv run python scripts/measure_overhead.py [--processes 20] [--rounds 3] [--baseline OTHER/src]

Prints the median and IQR of the orchestrator-side spawn-to-result time, and of the worker's own start-up
(child CPU time), from real runs stored in a temporary store. With `--baseline DIR` (the `src` directory of
another colbench checkout, e.g. from `git archive main src | tar -x -C /tmp/base`), rounds of this checkout
and of the baseline alternate, so machine load hits both alike, and the ratio of the medians is printed.

Each round also times, as plain processes started and reaped the same way, the two references the figure
needs to be read on a machine whose speed changes by the hour (the same interpreter start took 9.6 ms one
evening and 15.0 ms the next night on the reference VM):
- `python -c pass`: the interpreter's own start-up, which no isolated execution can avoid;
- `python -c "import <what every engine imports>"`: the standard modules pyarrow, pandas, polars and DuckDB
  all load themselves (re, inspect, typing, contextlib, pathlib, dataclasses, json).
colbench's own share is the placebo's median minus the first (all of it, for a case that imports nothing)
and minus the second (what colbench adds to a case of any engine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from colbench.runner.isolate import choose_cpus

#: Standard modules that pyarrow, pandas, polars and DuckDB each import themselves (python -X importtime).
ENGINE_COMMON_MODULES = "re, inspect, typing, contextlib, pathlib, dataclasses, json"


def one_round(processes: int, src: str | None) -> list[dict]:
    """Process records of one `colbench run placebo --param duration=0` with `src` first on sys.path."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp:
        env["COLBENCH_HOME"] = tmp
        env.pop("COLBENCH_STORE", None)
        store = str(Path(tmp) / "overhead.duckdb")
        subprocess.run([sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0", "--processes",
                        str(processes), "--iterations", "1", "--warmup", "0", "--store", store],
                       check=True, capture_output=True, env=env)
        out = Path(tmp) / "r.jsonl"
        subprocess.run([sys.executable, "-m", "colbench", "export", "--format", "jsonl", "--output", str(out),
                        "--store", store], check=True, capture_output=True, env=env)
        return [json.loads(line)["process"] for line in out.read_text().splitlines()]


def plain_processes(code: str, processes: int) -> list[float]:
    """Seconds from spawn to reaped exit of `python -c code`, started as colbench starts a worker: in a new
    session, pinned to the CPU colbench gives a single-threaded case."""
    cpus = (choose_cpus(1)[0] or [0])[:1]
    times = []
    for _ in range(processes):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, start_new_session=True,
                       preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        times.append(time.perf_counter() - started)
    return times


def _median_iqr(seconds: list[float]) -> tuple[float, str]:
    """The median, and "median X ms, IQR a–b ms" for printing."""
    q = statistics.quantiles(seconds, n=4)
    median = statistics.median(seconds)
    return median, f"median {median * 1e3:.1f} ms, IQR {q[0] * 1e3:.1f}–{q[2] * 1e3:.1f} ms"


def describe_plain(label: str, times: list[float]) -> float:
    median, text = _median_iqr(times)
    print(f"{label}, {len(times)} processes: {text}")
    return median


def describe(label: str, processes: list[dict]) -> float:
    spawn = sorted(p["spawn_to_result_s"] for p in processes)
    cpu = sorted(p["child_user_s"] + p["child_sys_s"] for p in processes)
    median, text = _median_iqr(spawn)
    print(f"{label}: isolated execution of placebo(duration=0), {len(spawn)} processes:")
    print(f"  spawn → result: {text}, min {spawn[0] * 1e3:.1f} ms, max {spawn[-1] * 1e3:.1f} ms")
    print(f"  worker CPU (user+sys): median {statistics.median(cpu) * 1e3:.1f} ms")
    return median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=20, help="worker processes per round")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds (alternating with the baseline's and the plain references)")
    parser.add_argument("--baseline", default=None, help="src directory of another colbench to compare with")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else "?"
    print(f"load average {load} on {os.cpu_count()} CPUs")
    mine: list[dict] = []
    base: list[dict] = []
    bare: list[float] = []
    common: list[float] = []
    for _ in range(args.rounds):
        if args.baseline:
            base += one_round(args.processes, args.baseline)
        mine += one_round(args.processes, None)
        bare += plain_processes("pass", args.processes)
        common += plain_processes(f"import {ENGINE_COMMON_MODULES}", args.processes)
    median = describe("this checkout", mine)
    if args.baseline:
        base_median = describe(f"baseline {args.baseline}", base)
        print(f"ratio this / baseline (medians): {median / base_median:.2f}")
    bare_median = describe_plain("plain `python -c pass`", bare)
    common_median = describe_plain(f"plain `python -c 'import {ENGINE_COMMON_MODULES}'`", common)
    print(f"colbench's own share: {(median - bare_median) * 1e3:.1f} ms above the interpreter's start "
          f"(a case that imports nothing), {(median - common_median) * 1e3:.1f} ms above the modules every "
          f"engine imports itself (a case of any engine)")


if __name__ == "__main__":
    main()
