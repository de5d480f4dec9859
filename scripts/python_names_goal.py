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
4. What the trampolines cost the timed call:
   - in instructions of the read: the base environment run again, `--measure instructions`, with
     PYTHONPERFSUPPORT=1 in its workers' environment (the trampolines on from start-up, as `-X perf`), against the
     first run's counts (off). CPython leaves those processes' maps in /tmp; the script removes the ones that
     appeared during that run and name its COLBENCH_HOME or the interpreter's folder, and only those;
   - in instructions of a call-heavy pure-Python function (a recursive fib(20): a trampoline per call, the worst
     case): the interpreter under callgrind, whole process, 1 and 11 calls, off and on; per call = the difference;
   - in wall time, in the base environment's interpreter: `--calls` reads of the same file per block, blocks with
     the trampolines off and on alternating (`--blocks` of each), and the same for fib(20). Median and
     interquartile range per side.

`--run ID` reuses a run of an earlier invocation (same --home) and goes on from step 3.

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
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from pathlib import Path

from colbench.runtimes.interpreters import find_interpreter

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


#: whole-process instruction count of N calls of fib(20), trampolines off or on (argv: N, off|on)
FIB = textwrap.dedent('''\
    import os, sys


    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)


    if sys.argv[2] == "on":
        sys.activate_stack_trampoline("perf")
    for _ in range(int(sys.argv[1])):
        fib(20)
    if sys.argv[2] == "on":
        sys.deactivate_stack_trampoline()
        os.remove("/tmp/perf-%d.map" % os.getpid())
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
    """explain's case document and its wall seconds; its CPU seconds (its workers' included) are printed, since on
    a loaded machine the wall time is mostly waiting for a CPU."""
    started, cpu = time.monotonic(), _children_cpu()
    out = colbench("explain", f"{run_id}:base", f"{run_id}:planted", "--rerun", "--format", "json", *options,
                   env=env)
    seconds = time.monotonic() - started
    print(f"explain {' '.join(options) or '(callgrind)'}: {seconds:.0f} s, of it {_children_cpu() - cpu:.0f} s of "
          f"CPU time (load average {os.getloadavg()[0]:.1f})")
    if out.returncode != 0:
        print(out.stdout[-2000:], out.stderr[-2000:], sep="\n")
        return None
    return json.loads(out.stdout)["cases"][0], seconds


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def report(what: str, case: dict, seconds: float) -> bool:
    functions = case["functions"]
    print(f"{what}: {seconds:.0f} s; {case['metric']}: {case['baseline']['total']:,} → "
          f"{case['contender']['total']:,} ({case['ratio'] - 1:+.2%})")
    for rank, f in enumerate(functions[:5], 1):
        print(f"  {rank}. {f['short'][:64]:64} {f['library'][:20]:20} {f['self']['change']:>+16,} "
              f"{f['share']:+.1%}")
    top = functions[0]
    return top["function"].startswith("py::Planted.checksum") and bool(top.get("lines", {}).get("contender"))


def results_of(run_id: str, home: Path, env: dict[str, str]) -> list[dict]:
    export = home / f"results-{run_id}.jsonl"
    colbench("export", run_id, "--format", "jsonl", "--output", str(export), env=env)
    return [json.loads(line) for line in export.read_text().splitlines()]


def _remove_own_maps(before: set[Path], marks: tuple[str, ...]) -> None:
    """The perf maps CPython left in /tmp for the processes of this script's PYTHONPERFSUPPORT run (its workers, and
    colbench asking the interpreter its version): maps that were not there `before` and name a file under one of
    `marks` (the run's COLBENCH_HOME, where the environments are, or the interpreter's own folder)."""
    for path in set(Path("/tmp").glob("perf-*.map")) - before:
        try:
            if any(mark in path.read_text(errors="replace") for mark in marks):
                path.unlink()
        except OSError:
            continue


def _instructions_of(python: str, code: str, *argv: str) -> int | None:
    """The whole process's instruction count under callgrind (no dump kept)."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c", code,
                           *argv], capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = [line for line in proc.stderr.splitlines() if "Collected :" in line]
    return int(found[-1].rsplit(":", 1)[1]) if proc.returncode == 0 and found else None


def explain_goals(run_id: str, env: dict[str, str]) -> dict[str, bool]:
    """explain of the run under callgrind and under perf: is the planted function rank 1, and how long it took."""
    goals: dict[str, bool] = {}
    called = explain(run_id, env)
    sampled = explain(run_id, env, "--profiler", "perf")
    if called is not None:
        case, seconds = called
        goals["callgrind: the planted function is rank 1, with its line"] = report("explain (callgrind)", case,
                                                                                   seconds)
        goals[f"explain (callgrind) took <= 3 minutes ({seconds:.0f} s)"] = seconds <= 180
        print(f"the base side's profile (trampolines on): {case['baseline']['total']:,} instructions")
    if sampled is not None:
        case, seconds = sampled
        goals["perf: the planted function is rank 1, with its line"] = report("explain --profiler perf", case,
                                                                              seconds)
        goals[f"explain --profiler perf took <= 3 minutes ({seconds:.0f} s)"] = seconds <= 180
    return goals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--units", type=int, default=300_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--run", default=None, help="reuse this run of an earlier invocation (same --home)")
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="colbench-python-names-"))
    wheel = planted_wheel(Path(tempfile.mkdtemp(prefix="python-names-wheel-")))
    env = {**os.environ, "COLBENCH_HOME": str(home), "PYTHON_NAMES_GOAL_UNITS": str(args.units)}
    env.pop("COLBENCH_STORE", None)
    print(f"home {home}; Python {args.python}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    started = time.monotonic()
    base = f"python=={args.python} pyarrow==21.0.0"
    run_id = args.run
    if run_id is None:
        run = colbench("run", *CASE, "--param", f"rows={args.rows}", "--measure", "wall,instructions",
                       "--processes", str(args.processes), "--env", f"base={base}",
                       "--env", f"planted={base} {wheel}", "--run-name", "python-names-goal", env=env)
        if run.returncode not in (0, 1):
            print(run.stdout[-2000:], run.stderr[-2000:], sep="\n")
            return 2
        run_id = json.loads(colbench("show", "--runs", "--format", "json", env=env).stdout)[0]["run_id"]
        print(f"run {run_id}: {time.monotonic() - started:.0f} s ({args.processes} processes a side, wall and "
              "instructions)")
    base_results = [r for r in results_of(run_id, home, env) if r["env_name"] == "base" and r["status"] == "ok"]
    counted = sorted(v for r in base_results for v in r["samples"].get("instructions") or [] if v)

    goals = explain_goals(run_id, env)
    maps_before = set(Path("/tmp").glob("perf-*.map"))
    with_trampolines = colbench("run", *CASE, "--param", f"rows={args.rows}", "--measure", "instructions",
                                "--processes", str(args.processes), "--env", f"base={base}",
                                "--run-name", "python-names-goal-trampolines",
                                env={**env, "PYTHONPERFSUPPORT": "1"})
    _remove_own_maps(maps_before, (str(home), str(Path(find_interpreter(args.python).path).parent.parent)))
    if with_trampolines.returncode in (0, 1) and counted:
        again = json.loads(colbench("show", "--runs", "--format", "json", env=env).stdout)[0]["run_id"]
        on = sorted(v for r in results_of(again, home, env) if r["status"] == "ok"
                    for v in r["samples"].get("instructions") or [] if v)
        if on:
            off_median, on_median = statistics.median(counted), statistics.median(on)
            print(f"trampolines, instructions of the read's timed call: off {off_median:,.0f} (range "
                  f"{counted[0]:,}–{counted[-1]:,}, n={len(counted)}), on {on_median:,.0f} (range {on[0]:,}–"
                  f"{on[-1]:,}, n={len(on)}): {on_median / off_median - 1:+.3%}")
    python = base_results[0]["runtime"]["executable"]
    fib_counts = {(calls, mode): _instructions_of(python, FIB, str(calls), mode)
                  for calls in (1, 11) for mode in ("off", "on")}
    if None not in fib_counts.values():
        per_call = {mode: (fib_counts[(11, mode)] - fib_counts[(1, mode)]) / 10 for mode in ("off", "on")}
        print(f"trampolines, instructions of one fib(20) call (21,891 Python calls): off {per_call['off']:,.0f}, on "
              f"{per_call['on']:,.0f} ({per_call['on'] / per_call['off'] - 1:+.1%}, "
              f"{(per_call['on'] - per_call['off']) / 21891:.1f} a call)")
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
