"""What does counting a whole asv suite for two releases cost? (issue #46: pyarrow's asv suite, 94 cases, two pyarrow
releases, <= 15 minutes of wall time on 2 cores)

    uv run python scripts/measure_asv_suite_count.py SUITE_DIR [--old pyarrow==17.0.0] [--new pyarrow==21.0.0]
        [--bench REGEX] [--home DIR] [--fresh-counts] [--from-run NAME] [--jobs N] [--budget 2h]

SUITE_DIR is an asv benchmark folder, e.g. apache/arrow's `python/benchmarks` (fetched into a temporary folder: it is
Apache's code, never part of this repository). The script runs the real command

    colbench run asv:SUITE_DIR --env old=OLD --env new=NEW --measure instructions --run-name NAME

in its own COLBENCH_HOME (`--home`, kept: environments and the bytecode cache are reused by a second run), timed from
outside, with the load average sampled every 10 s while it runs (the machine may be shared: the seconds depend on the
load, the CPU per process much less). The environments are built first by a `--dry-run`-free preparation run of one
case, so the timed run measures counting, not `uv`. Then it reads the run's records and prints:

- the counting processes: how many, how each was counted (forked from a suite or case server, or fresh), which rule
  stopped it (`measure.instructions.stopped_by`), and its CPU (`measure.instructions.process`: the process's own user
  + system seconds from `wait4`): median and range;
- the servers' CPU (each server once: its start, interpreter and the suite's imports under Valgrind, `setup_cpu_s`);
- the total CPU (processes + servers), the wall time, and the load during the run.

`--from-run NAME` prints the figures of a run already in `--home` without running anything.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def colbench(home: Path, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """`colbench ARGS` in HOME; `prefix` goes before the interpreter (e.g. `taskset -c 0`)."""
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    return subprocess.run([*prefix, sys.executable, "-m", "colbench", *args], env=env, text=True,
                          capture_output=True, check=False)


class LoadSampler:
    """The 1-minute load average every `every_s` seconds while the run goes."""

    def __init__(self, every_s: float = 10.0) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every_s,), daemon=True)

    def _run(self, every_s: float) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(every_s)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def results_of(home: Path, run_name: str) -> list[dict[str, Any]]:
    os.environ["COLBENCH_HOME"] = str(home)
    from colbench.store import open_store
    from colbench.store.base import ResultQuery

    store = open_store(str(home / "results.duckdb"), create=False)
    runs = [r for r in store.list_runs() if r.name == run_name]
    if not runs:
        raise SystemExit(f"no run named {run_name!r} in {home}")
    return [r.to_json() for r in store.results(ResultQuery(run_ids=(runs[-1].run_id,)))]


def figures(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per process: its CPU, how it was counted and what stopped it; each server's CPU once."""
    cpu: list[float] = []
    kinds: dict[str, int] = {}
    stops: dict[str, int] = {}
    servers: dict[int, float] = {}
    errors = 0
    for r in results:
        counted = (r.get("measure") or {}).get("instructions") or {}
        process = counted.get("process") or {}
        if r["status"] != "ok":
            errors += 1
        if "child_user_s" not in process:
            continue
        cpu.append(float(process["child_user_s"]) + float(process.get("child_sys_s") or 0.0))
        server = counted.get("server")
        kind = f"{server.get('scope', 'case')} server" if server else "fresh"
        kinds[kind] = kinds.get(kind, 0) + 1
        stops[str(counted.get("stopped_by"))] = stops.get(str(counted.get("stopped_by")), 0) + 1
        if server:
            servers[int(server["pid"])] = float(server.get("setup_cpu_s") or 0.0)
    return {"cpu": cpu, "kinds": kinds, "stops": stops, "servers": servers, "errors": errors,
            "results": len(results)}


def report(found: dict[str, Any], wall_s: float | None, loads: list[float]) -> None:
    cpu = found["cpu"]
    if not cpu:
        print(f"no counting process in the run ({found['results']} results, {found['errors']} errors)")
        return
    server_cpu = sum(found["servers"].values())
    total = sum(cpu) + server_cpu
    print(f"results: {found['results']} ({found['errors']} errors)")
    print(f"counting processes: {len(cpu)}; counted by: "
          + ", ".join(f"{k} {v}" for k, v in sorted(found["kinds"].items())))
    print("stopped by: " + ", ".join(f"{k} {v}" for k, v in sorted(found["stops"].items())))
    print(f"CPU per process: median {statistics.median(cpu):.2f} s (min {min(cpu):.2f}, max {max(cpu):.2f}), "
          f"sum {sum(cpu):.0f} s")
    if found["servers"]:
        values = list(found["servers"].values())
        print(f"servers: {len(values)}, CPU each {min(values):.1f}-{max(values):.1f} s, sum {server_cpu:.0f} s")
    print(f"total CPU (processes + servers): {total:.0f} s = {total / 60:.1f} min; "
          f"{total / len(cpu):.2f} s a process all in")
    if wall_s is not None:
        print(f"wall time: {wall_s:.0f} s = {wall_s / 60:.1f} min")
    if loads:
        print(f"load (1-min average) during the run: median {statistics.median(loads):.1f} "
              f"(min {min(loads):.1f}, max {max(loads):.1f}) on {os.cpu_count()} CPUs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--old", default="pyarrow==17.0.0")
    parser.add_argument("--new", default="pyarrow==21.0.0")
    parser.add_argument("--bench", default=None, help="asv's -b: a regular expression of benchmark names")
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--fresh-counts", action="store_true", help="count in fresh processes (the old way)")
    parser.add_argument("--from-run", default=None, help="print the figures of this run in --home")
    parser.add_argument("--jobs", default=None, help="processes counted at once (run --jobs; default: one at a time)")
    parser.add_argument("--budget", default=None, help="run --budget: time for the looks after the first, e.g. 2h")
    args = parser.parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="colbench-suite-count-"))
    home.mkdir(parents=True, exist_ok=True)
    if args.from_run:
        report(figures(results_of(home, args.from_run)), None, [])
        return 0
    target = f"asv:{args.suite.resolve()}"
    envs = ["--env", f"old={args.old}", "--env", f"new={args.new}"]
    bench = ["-b", args.bench] if args.bench else []
    print(f"home {home}; building the environments (one wall-time case, not timed)", flush=True)
    colbench(home, "run", target, "-b", "ScalarAccess.time_getitem", *envs, "--processes", "1", "--iterations",
             "1", "--warmup", "0", "--run-name", "prepare")
    name = f"suite-count-{int(time.time())}"
    command = ["run", target, *bench, *envs, "--measure", "instructions", "--run-name", name,
               *(["--fresh-counts"] if args.fresh_counts else []), *(["--jobs", args.jobs] if args.jobs else []),
               *(["--budget", args.budget] if args.budget else [])]
    print("colbench " + " ".join(command), flush=True)
    with LoadSampler() as load:
        started = time.perf_counter()
        done = colbench(home, *command)
        wall = time.perf_counter() - started
    print(done.stdout[-3000:])
    if done.returncode not in (0, 1):
        print(done.stderr[-3000:], file=sys.stderr)
    report(figures(results_of(home, name)), wall, load.samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
