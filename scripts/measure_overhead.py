"""Measure what one isolated execution costs: `placebo` with duration 0, and an asv benchmark that does nothing,
spawn to result, over N processes.

    uv run python scripts/measure_overhead.py [--processes 20] [--rounds 3] [--baseline OTHER/src] [--instructions]

Prints the median and IQR of the orchestrator-side spawn-to-result time, and of the worker's own start-up
(child CPU time), from real runs stored in a temporary store. Each round's run holds both cases, in alternating
order: the placebo (the plain worker) and `time_nothing` of an asv suite written here (`number = 1`, no setup: what
it adds is asv's runner imported and the benchmark found, colbench's per-case overhead on an asv suite), and the
asv case's difference from the placebo is printed per round. With `--baseline DIR` (the `src` directory of
another colbench checkout, e.g. from `git archive main src | tar -x -C /tmp/base`), rounds of this checkout
and of the baseline alternate, so machine load hits both alike, and the ratio of the medians is printed.

Each round also times, as plain processes started and reaped the same way, the two references the figure
needs to be read on a machine whose speed changes by the hour (the same interpreter start took 9.6 ms one
evening and 15.0 ms the next night on the reference VM):
- `python -c pass`: the interpreter's own start-up, which no isolated execution can avoid;
- `python -c "import <what every engine imports>"`: the standard modules pyarrow, pandas, polars and DuckDB
  all load themselves (re, inspect, typing, contextlib, pathlib, dataclasses, json).
colbench's own share is the placebo's median minus the first (all of it, for a case that imports nothing)
and minus the second (what colbench adds to a case of any engine). On a loaded machine the wall-clock figures
mostly measure waiting for a CPU; the CPU times beside them do not, and `--instructions` counts one execution
and one plain process under Valgrind: a figure that neither load nor the CPU's speed moves.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from colbench.runner.isolate import choose_cpus

#: Standard modules that pyarrow, pandas, polars and DuckDB each import themselves (python -X importtime).
ENGINE_COMMON_MODULES = "re, inspect, typing, contextlib, pathlib, dataclasses, json"
#: an asv benchmark that does nothing, in a suite of its own
ASV_SUITE = "def time_nothing():\n    pass\n\n\ntime_nothing.number = 1\n"


def asv_suite(folder: Path) -> Path:
    """A one-benchmark asv suite under `folder` (its `benchmarks` package)."""
    suite = folder / "benchmarks"
    suite.mkdir(parents=True, exist_ok=True)
    (suite / "__init__.py").write_text("")
    (suite / "bench_nothing.py").write_text(ASV_SUITE)
    return suite


def one_round(processes: int, src: str | None, suite: Path | None = None,
              asv_first: bool = False) -> dict[str, list[dict]]:
    """Process records, by case ("placebo", "asv"), of one `colbench run placebo --param duration=0` (and the asv
    suite's case, first or second) with `src` first on sys.path."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    targets = ["placebo"] if suite is None else [f"asv:{suite}", "placebo"][::1 if asv_first else -1]
    with tempfile.TemporaryDirectory() as tmp:
        env["COLBENCH_HOME"] = tmp
        env.pop("COLBENCH_STORE", None)
        store = str(Path(tmp) / "overhead.duckdb")
        subprocess.run([sys.executable, "-m", "colbench", "run", *targets, "--param", "duration=0", "--processes",
                        str(processes), "--iterations", "1", "--warmup", "0", "--measure", "wall", "--store", store],
                       check=True, capture_output=True, env=env)
        out = Path(tmp) / "r.jsonl"
        subprocess.run([sys.executable, "-m", "colbench", "export", "--format", "jsonl", "--output", str(out),
                        "--store", store], check=True, capture_output=True, env=env)
        rows: dict[str, list[dict]] = {"placebo": [], "asv": []}
        for line in out.read_text().splitlines():
            row = json.loads(line)
            if row["status"] != "ok":
                raise SystemExit(f"{row['benchmark']}: {row['status']} {row.get('error')}")
            rows["placebo" if row["benchmark"] == "placebo" else "asv"].append(row["process"])
        return rows


def plain_processes(code: str, processes: int) -> tuple[list[float], list[float]]:
    """Seconds from spawn to reaped exit of `python -c code`, and each process's CPU time (user + sys), started as
    colbench starts a worker: in a new session, pinned to the CPU colbench gives a single-threaded case."""
    cpus = (choose_cpus(1)[0] or [0])[:1]
    times, cpu = [], []
    for _ in range(processes):
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, start_new_session=True,
                                 preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        times.append(time.perf_counter() - started)
        if child.returncode != 0:
            raise SystemExit(f"python -c {code!r} exited with {child.returncode}")
        cpu.append(usage.ru_utime + usage.ru_stime)
    return times, cpu


def instructions(command: list[str], env: dict[str, str] | None = None) -> int | None:
    """User-space instructions of one whole process (Valgrind's callgrind), None without Valgrind: a figure that
    does not move with the machine's load or its CPU's speed."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", "-q", f"--callgrind-out-file={out}", *command],
                       check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=env)
        for line in out.read_text().splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    return None


def worker_instructions(src: str | None, target: str = "placebo") -> int | None:
    """Instructions of one execution of the Python worker, case.json in, result.json out: placebo(duration=0), or
    the first case of `target`."""
    env_src = [src] if src else []
    with tempfile.TemporaryDirectory() as tmp:
        case = Path(tmp) / "case.json"
        code = ("import json, sys\n"
                f"sys.path[:0] = {env_src!r}\n"
                "from colbench.runner.plan import make_plan\n"
                "from colbench.runner.execute import case_spec\n"
                f"plan = make_plan([{target!r}], {{'duration': ['0']}} if {target!r} == 'placebo' else {{}})\n"
                "spec = case_spec(plan.cases[0], {}, 1, 0, 42)\n"
                f"spec.scratch_dir = {str(Path(tmp) / 'scratch')!r}\n"
                "print(json.dumps(spec.to_json()))\n")
        case.write_text(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                       env={**os.environ, "COLBENCH_HOME": tmp}).stdout)
        env = {**os.environ, "PYTHONPATH": src} if src else None
        return instructions([sys.executable, "-m", "colbench.worker", str(case), str(Path(tmp) / "r.json")], env)


def _median_iqr(seconds: list[float]) -> tuple[float, str]:
    """The median, and "median X ms, IQR a–b ms" for printing."""
    q = statistics.quantiles(seconds, n=4)
    median = statistics.median(seconds)
    return median, f"median {median * 1e3:.1f} ms, IQR {q[0] * 1e3:.1f}–{q[2] * 1e3:.1f} ms"


def describe_plain(label: str, times: list[float], cpu: list[float]) -> tuple[float, float]:
    median, text = _median_iqr(times)
    print(f"{label}, {len(times)} processes: {text}; CPU (user+sys) median {statistics.median(cpu) * 1e3:.1f} ms")
    return median, statistics.median(cpu)


def describe(label: str, processes: list[dict]) -> tuple[float, float]:
    spawn = sorted(p["spawn_to_result_s"] for p in processes)
    cpu = sorted(p["child_user_s"] + p["child_sys_s"] for p in processes)
    median, text = _median_iqr(spawn)
    print(f"{label}: isolated execution of placebo(duration=0), {len(spawn)} processes:")
    print(f"  spawn → result: {text}, min {spawn[0] * 1e3:.1f} ms, max {spawn[-1] * 1e3:.1f} ms")
    print(f"  worker CPU (user+sys): median {statistics.median(cpu) * 1e3:.1f} ms")
    return median, statistics.median(cpu)


def describe_asv(asv: list[dict], placebo: list[dict], per_round: list[tuple[float, float]]) -> None:
    """The asv case's figures, and its difference from the placebo's: of the medians, and per round (its spread)."""
    spawn = sorted(p["spawn_to_result_s"] for p in asv)
    cpu = sorted(p["child_user_s"] + p["child_sys_s"] for p in asv)
    _, text = _median_iqr(spawn)
    _, cpu_text = _median_iqr(cpu)
    print(f"asv benchmark time_nothing (number = 1), {len(spawn)} processes, in the same runs:")
    print(f"  spawn → result: {text}; worker CPU (user+sys): {cpu_text}")
    wall = statistics.median(spawn) - statistics.median(p["spawn_to_result_s"] for p in placebo)
    cpu_diff = statistics.median(cpu) - statistics.median(p["child_user_s"] + p["child_sys_s"] for p in placebo)
    rounds = ", ".join(f"{w * 1e3:+.1f}/{c * 1e3:+.1f}" for w, c in per_round)
    print(f"colbench's per-case overhead on an asv benchmark: {wall * 1e3:+.1f} ms wall, {cpu_diff * 1e3:+.1f} ms "
          f"worker CPU over the plain worker's (medians; per round, wall/CPU: {rounds})")


def _medians_diff(rows: dict[str, list[dict]]) -> tuple[float, float]:
    def medians(found: list[dict]) -> tuple[float, float]:
        return (statistics.median(p["spawn_to_result_s"] for p in found),
                statistics.median(p["child_user_s"] + p["child_sys_s"] for p in found))

    (asv_wall, asv_cpu), (wall, cpu) = medians(rows["asv"]), medians(rows["placebo"])
    return asv_wall - wall, asv_cpu - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=20, help="worker processes per round")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds (alternating with the baseline's and the plain references)")
    parser.add_argument("--baseline", default=None, help="src directory of another colbench to compare with")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the instructions of one execution under Valgrind (load-independent)")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else "?"
    print(f"load average {load} on {os.cpu_count()} CPUs")
    mine: list[dict] = []
    asv: list[dict] = []
    asv_rounds: list[tuple[float, float]] = []
    base: list[dict] = []
    bare: tuple[list[float], list[float]] = ([], [])
    common: tuple[list[float], list[float]] = ([], [])
    with tempfile.TemporaryDirectory(prefix="colbench-overhead-") as tmp:
        suite = asv_suite(Path(tmp))
        for index in range(args.rounds):
            if args.baseline:
                base += one_round(args.processes, args.baseline)["placebo"]
            rows = one_round(args.processes, None, suite, asv_first=index % 2 == 1)
            mine += rows["placebo"]
            asv += rows["asv"]
            asv_rounds.append(_medians_diff(rows))
            for into, code in ((bare, "pass"), (common, f"import {ENGINE_COMMON_MODULES}")):
                times, cpu = plain_processes(code, args.processes)
                into[0].extend(times)
                into[1].extend(cpu)
        median, cpu = describe("this checkout", mine)
        if args.baseline:
            base_median, _ = describe(f"baseline {args.baseline}", base)
            print(f"ratio this / baseline (medians): {median / base_median:.2f}")
        bare_median, _ = describe_plain("plain `python -c pass`", *bare)
        common_median, common_cpu = describe_plain(f"plain `python -c 'import {ENGINE_COMMON_MODULES}'`", *common)
        print(f"colbench's own share: {(median - bare_median) * 1e3:.1f} ms above the interpreter's start "
              f"(a case that imports nothing), {(median - common_median) * 1e3:.1f} ms above the modules every "
              f"engine imports itself (a case of any engine); in CPU time {(cpu - common_cpu) * 1e3:.1f} ms above "
              "those modules")
        describe_asv(asv, mine, asv_rounds)
        if args.instructions:
            print_instructions(args.baseline, suite)


def print_instructions(baseline: str | None, suite: Path) -> None:
    """Whole-process instruction counts of the placebo's and the asv case's executions and the plain reference."""
    worker = worker_instructions(None)
    asv = worker_instructions(None, f"asv:{suite}")
    plain = instructions([sys.executable, "-c", f"import {ENGINE_COMMON_MODULES}"])
    if worker is None or plain is None or asv is None:
        print("instructions: Valgrind is not installed")
        return
    print(f"instructions (callgrind, whole process; load-independent): the worker's placebo execution "
          f"{worker / 1e6:.1f} M, plain `import {ENGINE_COMMON_MODULES}` {plain / 1e6:.1f} M: colbench's own "
          f"{(worker - plain) / 1e6:.1f} M above those modules", end="")
    if baseline:
        base_worker = worker_instructions(baseline)
        if base_worker is not None:
            print(f", baseline's {(base_worker - plain) / 1e6:.1f} M", end="")
    print()
    print(f"instructions of the asv case's execution: {asv / 1e6:.1f} M, {(asv - worker) / 1e6:+.1f} M over the "
          "placebo's")


if __name__ == "__main__":
    main()
