"""Does `colbench explain` name a Python function on Python 3.12+, and what do CPython's perf trampolines cost?

    uv run python scripts/python_names_goal.py [--python 3.12] [--rows 200000] [--units 300000] [--processes 2]
                                               [--calls 20] [--blocks 6] [--home DIR]

Everything goes through the real `colbench` command in a fresh COLBENCH_HOME (the data cache is shared through
COLBENCH_DATA when set):

1. The plant. A wheel built here, `colbench_planted`, installs a `.pth` file that imports it at start-up; it wraps
   `pyarrow.parquet.read_table` so that every call first runs `Planted.checksum(units)`, a pure-Python loop
   colbench knows nothing about.
2. One run on `--python`, two environments interleaved: `base = python==X pyarrow==21.0.0` and `planted` (the same
   and the wheel), the E5 case `file-read` of a --rows-row uncompressed Parquet file into an Arrow table, one
   thread, `--measure wall,instructions`.
3. `colbench explain RUN:base RUN:planted --rerun` (callgrind) and `--profiler perf`, timed from outside: fresh
   profiling workers for both sides.
4. What the trampolines cost the timed call, two ways:
   - in instructions: the base side's profile (trampolines on) against the instructions the run counted for the
     same case (off), both of one timed call;
   - in wall time, in the base environment's interpreter: `--calls` reads of the same file per block, blocks with
     the trampolines off and on alternating (`--blocks` of each), and the same for a call-heavy pure-Python
     function (a recursive fib: a trampoline per call, the worst case). Median and interquartile range per side.

Goals (issue #38): the planted function is rank 1 of both explains, named with its module and line; explain of the
read takes <= 3 minutes. The load average is printed with the figures: the seconds depend on it, the instruction
counts do not.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from pathlib import Path

CASE = ["file-read", "--param", "format=parquet", "--param", "codec=uncompressed", "--param", "engine=pyarrow",
        "--param", "source=fanniemae_2016Q4", "--param", "output=arrow_table", "--threads", "1"]
NAME = "colbench_planted"
MODULE = textwrap.dedent('''\
    """Planted by scripts/python_names_goal.py: a pure-Python loop before every pyarrow.parquet.read_table call."""
    import os

    import pyarrow.parquet as _pq

    UNITS = int(os.environ.get("PYTHON_NAMES_GOAL_UNITS", "300000"))


    class Planted:
        @staticmethod
        def checksum(units):
            acc = 0
            for i in range(units):
                acc = (acc * 31 + i) & 0xFFFF
            return acc


    _read_table = _pq.read_table


    def read_table(*args, **kwargs):
        Planted.checksum(UNITS)
        return _read_table(*args, **kwargs)


    _pq.read_table = read_table
''')
#: run in the base environment's interpreter: wall time of the timed call with the trampolines off and on
HARNESS = textwrap.dedent('''\
    import json, os, sys, time
    import pyarrow.parquet as pq

    path, calls, blocks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    perf_map = "/tmp/perf-%d.map" % os.getpid()
    if os.path.exists(perf_map):
        sys.exit("a perf map is already at " + perf_map)


    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)


    work = {"parquet read": lambda: pq.read_table(path), "fib(20), pure Python": lambda: fib(20)}
    times = {name: {"off": [], "on": []} for name in work}
    for block in range(2 * blocks):
        mode = ("off", "on")[block % 2]
        if mode == "on":
            sys.activate_stack_trampoline("perf")
        for name, call in work.items():
            call()
            for _ in range(calls):
                start = time.perf_counter_ns()
                call()
                times[name][mode].append((time.perf_counter_ns() - start) / 1e6)
        if mode == "on":
            sys.deactivate_stack_trampoline()
    os.remove(perf_map)
    print(json.dumps(times))
''')


def colbench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "colbench", *args], env=env, text=True, capture_output=True)


def planted_wheel(folder: Path) -> Path:
    """The wheel: the module and a .pth that imports it at start-up (the metadata uv needs; fixed time stamps)."""
    info = f"{NAME}-1.0.dist-info"
    files = {f"{NAME}.py": MODULE.encode(), f"{NAME}.pth": f"import {NAME}\n".encode(),
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: 1.0\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: python_names_goal\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n"}
    digest = {name: base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
              for name, data in files.items()}
    files[f"{info}/RECORD"] = ("".join(f"{n},sha256={digest[n]},{len(d)}\n" for n, d in files.items())
                               + f"{info}/RECORD,,\n").encode()
    path = folder / f"{NAME}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data)
    return path


def spread(values: list[float]) -> str:
    q1, median, q3 = statistics.quantiles(values, n=4)
    return f"{median:.2f} ms (IQR {q1:.2f}–{q3:.2f}, n={len(values)})"


def explain(run_id: str, env: dict[str, str], *options: str) -> tuple[dict, float] | None:
    started = time.monotonic()
    out = colbench("explain", f"{run_id}:base", f"{run_id}:planted", "--rerun", "--format", "json", *options,
                   env=env)
    seconds = time.monotonic() - started
    if out.returncode != 0:
        print(out.stdout[-2000:], out.stderr[-2000:], sep="\n")
        return None
    return json.loads(out.stdout)["cases"][0], seconds


def report(what: str, case: dict, seconds: float) -> bool:
    functions = case["functions"]
    print(f"{what}: {seconds:.0f} s; {case['metric']}: {case['baseline']['total']:,} → "
          f"{case['contender']['total']:,} ({case['ratio'] - 1:+.2%})")
    for rank, f in enumerate(functions[:5], 1):
        print(f"  {rank}. {f['short'][:64]:64} {f['library'][:20]:20} {f['self']['change']:>+16,} "
              f"{f['share']:+.1%}")
    top = functions[0]
    return top["function"].startswith("py::Planted.checksum") and bool(top.get("lines", {}).get("contender"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--units", type=int, default=300_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="colbench-python-names-"))
    wheel = planted_wheel(Path(tempfile.mkdtemp(prefix="python-names-wheel-")))
    env = {**os.environ, "COLBENCH_HOME": str(home), "PYTHON_NAMES_GOAL_UNITS": str(args.units)}
    env.pop("COLBENCH_STORE", None)
    print(f"home {home}; Python {args.python}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    started = time.monotonic()
    base = f"python=={args.python} pyarrow==21.0.0"
    run = colbench("run", *CASE, "--param", f"rows={args.rows}", "--measure", "wall,instructions",
                   "--processes", str(args.processes), "--env", f"base={base}", "--env", f"planted={base} {wheel}",
                   "--run-name", "python-names-goal", env=env)
    if run.returncode not in (0, 1):
        print(run.stdout[-2000:], run.stderr[-2000:], sep="\n")
        return 2
    run_id = json.loads(colbench("show", "--runs", "--format", "json", env=env).stdout)[0]["run_id"]
    print(f"run {run_id}: {time.monotonic() - started:.0f} s ({args.processes} processes a side, wall and "
          "instructions)")
    export = home / "results.jsonl"
    colbench("export", run_id, "--format", "jsonl", "--output", str(export), env=env)
    results = [json.loads(line) for line in export.read_text().splitlines()]
    base_results = [r for r in results if r["env_name"] == "base" and r["status"] == "ok"]
    counted = sorted(v for r in base_results for v in r["samples"].get("instructions") or [] if v)

    goals: dict[str, bool] = {}
    called = explain(run_id, env)
    sampled = explain(run_id, env, "--profiler", "perf")
    if called is not None:
        case, seconds = called
        goals["callgrind: the planted function is rank 1, with its line"] = report("explain (callgrind)", case,
                                                                                   seconds)
        goals[f"explain (callgrind) took <= 3 minutes ({seconds:.0f} s)"] = seconds <= 180
        profiled = case["baseline"]["total"]
        if counted:
            median = statistics.median(counted)
            print(f"trampolines, instructions of the base side's timed call: {median:,.0f} counted without them "
                  f"(median of {len(counted)}, range {counted[0]:,}–{counted[-1]:,}), {profiled:,} profiled with "
                  f"them ({profiled / median - 1:+.3%})")
    if sampled is not None:
        case, seconds = sampled
        goals["perf: the planted function is rank 1, with its line"] = report("explain --profiler perf", case,
                                                                              seconds)
        goals[f"explain --profiler perf took <= 3 minutes ({seconds:.0f} s)"] = seconds <= 180

    python = base_results[0]["runtime"]["executable"]
    data = (base_results[0].get("inputs") or {}).get("data", {}).get("path")
    if data:
        timed = subprocess.run([python, "-c", HARNESS, data, str(args.calls), str(args.blocks)],
                               capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                                    if k != "PYTHONPATH"})
        if timed.returncode == 0:
            for name, sides in json.loads(timed.stdout).items():
                ratio = statistics.median(sides["on"]) / statistics.median(sides["off"])
                print(f"trampolines, wall time of {name} ({args.blocks} blocks of {args.calls} calls each way, "
                      f"interleaved): off {spread(sides['off'])}, on {spread(sides['on'])}; on/off {ratio:.3f}")
        else:
            print(f"wall-time harness failed: {timed.stderr.strip()[-500:]}")
    for goal, met in goals.items():
        print(f"{'met' if met else 'MISSED'}: {goal}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if goals and all(goals.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
