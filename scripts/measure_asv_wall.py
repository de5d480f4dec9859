"""Do colbench's wall times of an asv suite agree with asv's own? (issue #43: the same suite's wall-time medians, run
by asv itself and by colbench on one pyarrow, within ±10% for the cases both time, side by side in one sitting)

    uv run python scripts/measure_asv_wall.py SUITE_DIR --asv VENV/bin/asv [--bench REGEX] [--work DIR] [--alternate]

SUITE_DIR is an asv benchmark folder, e.g. apache/arrow's `python/benchmarks` (fetched into a temporary folder: it is
Apache's code, never part of this repository). VENV is a virtual environment holding asv (from the package index)
and the same library versions as colbench's own environment (`--python=same` runs the benchmarks in asv's
interpreter), e.g.

    uv venv --python .venv/bin/python VENV && uv pip install --python VENV/bin/python asv==0.6.6 \
        pyarrow==$(.venv/bin/python -c 'import pyarrow; print(pyarrow.__version__)') numpy pandas pytest

The script copies the suite into a minimal asv project (a git repository of its own, `environment_type: existing`),
then runs, one after the other in one sitting: asv (`asv run --python=same --set-commit-hash HEAD`), colbench with
its defaults (`colbench run asv:… -b` the same, in its own COLBENCH_HOME, the default environment: colbench's own
interpreter), and asv again. Each is timed from outside with the load average sampled every 10 s. It prints, per case
that both timed: asv's median of each run (asv's `result`), colbench's median (of its processes' medians), the ratio
of colbench's to the mean of asv's, and asv's second run over its first (the machine's own repeatability); then how
many cases agree within ±10% and each tool's whole wall time.

`--alternate` runs the three one benchmark at a time instead (asv, colbench, asv on `-b '^NAME$'`, then the next
benchmark): on a VM whose CPU switches between two speeds for minutes at a time (docs/gating.md), three whole-suite
runs one after the other see different speeds, while the three runs of one benchmark, a minute or two apart, mostly
see the same one. The whole wall times are then the sums of the per-benchmark runs (asv starts once per benchmark).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure_asv_suite_count import LoadSampler, colbench, results_of  # noqa: E402

ASV_CONF = {"version": 1, "project": "suite", "repo": ".", "branches": ["HEAD"], "environment_type": "existing",
            "benchmark_dir": "benchmarks", "results_dir": "results", "html_dir": "html"}


def make_project(suite: Path, work: Path) -> Path:
    project = work / "asvproject"
    if project.exists():
        shutil.rmtree(project)
    shutil.copytree(suite, project / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "asv.conf.json").write_text(json.dumps(ASV_CONF, indent=2))
    git = ["git", "-c", "user.name=colbench", "-c", "user.email=colbench@localhost"]
    subprocess.run([*git, "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "suite"], cwd=project, check=True)
    return project


def run_asv(asv: Path, project: Path, bench: str | None) -> tuple[dict[tuple[str, tuple[str, ...]], float], float,
                                                                  list[float]]:
    results = project / "results"
    if results.exists():
        shutil.rmtree(results)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, check=True, text=True,
                            capture_output=True).stdout.strip()
    subprocess.run([str(asv), "machine", "--yes", "--machine", "colbench-vm"], cwd=project, check=True,
                   capture_output=True)
    command = [str(asv), "run", "--python=same", "--set-commit-hash", commit, "--machine", "colbench-vm",
               *(["-b", bench] if bench else [])]
    print(" ".join(command), flush=True)
    with LoadSampler() as load:
        started = time.perf_counter()
        done = subprocess.run(command, cwd=project, text=True, capture_output=True, check=False)
        wall = time.perf_counter() - started
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    return asv_medians(project / "results" / "colbench-vm"), wall, load.samples


def asv_medians(folder: Path) -> dict[tuple[str, tuple[str, ...]], float]:
    """asv's `result` of each case (its median), keyed by name and asv's parameter strings in order."""
    medians: dict[tuple[str, tuple[str, ...]], float] = {}
    for path in folder.glob("*.json"):
        if path.name == "machine.json":
            continue
        data = json.loads(path.read_text())
        columns = data["result_columns"]
        for name, row in data["results"].items():
            cell = dict(zip(columns, row, strict=False))
            values, params = cell["result"], cell["params"]
            if values is None:
                continue
            for combo, value in zip(itertools.product(*params) if params else [()], values, strict=False):
                if value is not None and not (isinstance(value, float) and value != value):
                    medians[(name, tuple(combo))] = float(value)
    return medians


# The axes colbench adds to every case of a Python engine; asv's own params come before them, in asv's order.
COLBENCH_AXES = ("threads", "allocator", "cache")


def colbench_medians(home: Path, run_name: str) -> dict[tuple[str, tuple[str, ...]], float]:
    """colbench's median of each case: the median of its processes' medians, as `compare` takes them."""
    per_case: dict[tuple[str, tuple[str, ...]], list[float]] = {}
    for r in results_of(home, run_name):
        samples = (r.get("samples") or {}).get("wall_s") or []
        if r["status"] != "ok" or not samples:
            continue
        params = {k: v for k, v in (r.get("params") or {}).items() if k not in COLBENCH_AXES}
        key = (r["benchmark"], tuple(str(v) for v in params.values()))
        per_case.setdefault(key, []).append(statistics.median(samples))
    return {key: statistics.median(medians) for key, medians in per_case.items()}


def benchmark_names(home: Path, suite: Path, bench: str | None) -> list[str]:
    """The suite's benchmark names as `colbench list` discovers them (asv's discovery, in the worker)."""
    done = colbench(home, "list", f"asv:{suite}", *(["-b", bench] if bench else []), "-f", "json")
    if done.returncode != 0:
        raise SystemExit(f"colbench list failed: {done.stderr.strip()[-500:]}")
    return list(json.loads(done.stdout)["benchmarks"])


def run_colbench(home: Path, suite: Path, bench: str | None, name: str) -> tuple[dict[tuple[str, tuple[str, ...]],
                                                                                        float], float, list[float]]:
    command = ["run", f"asv:{suite}", *(["-b", bench] if bench else []), "--run-name", name]
    print("colbench " + " ".join(command), flush=True)
    with LoadSampler() as load:
        started = time.perf_counter()
        done = colbench(home, *command)
        wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    return colbench_medians(home, name), wall, load.samples


def alternated(asv: Path, project: Path, home: Path, bench: str | None) -> tuple[list[Any], list[float], list[Any]]:
    """asv, colbench, asv one benchmark at a time; the medians of each, the three whole wall times, and the loads."""
    suite = project / "benchmarks"
    found: list[Any] = [{}, {}, {}]
    walls = [0.0, 0.0, 0.0]
    loads: list[Any] = [[], [], []]
    for name in benchmark_names(home, suite, bench):
        only = f"^{re.escape(name)}(\\(.*\\))?$"  # asv matches a parametrized one as `name(p1, p2)`
        runs = [run_asv(asv, project, only)]
        runs.append(run_colbench(home, suite, only, f"asv-wall-{int(time.time())}-{name}"))
        runs.append(run_asv(asv, project, only))
        for slot, (medians, wall, load) in enumerate(runs):
            found[slot].update(medians)
            walls[slot] += wall
            loads[slot] += load
    return found, walls, loads


def load_text(loads: list[float]) -> str:
    return f"load {min(loads):.1f}-{max(loads):.1f}, median {statistics.median(loads):.1f}" if loads else "load ?"


def seconds(value: float) -> str:
    return f"{value * 1e3:.2f} ms" if value < 1 else f"{value:.3f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--asv", type=Path, required=True, help="the asv executable of a venv with the library")
    parser.add_argument("--bench", default=None, help="asv's -b: a regular expression of benchmark names")
    parser.add_argument("--work", type=Path, default=None, help="a folder for the project and colbench's home")
    parser.add_argument("--alternate", action="store_true", help="asv, colbench, asv one benchmark at a time")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="colbench-asv-wall-"))
    work.mkdir(parents=True, exist_ok=True)
    project = make_project(args.suite.resolve(), work)
    home = work / "home"
    print(f"project {project}; colbench home {home}; started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}", flush=True)

    if args.alternate:
        (first, ours, second), (first_wall, ours_wall, second_wall), loads = alternated(args.asv, project, home,
                                                                                        args.bench)
        for label, found, wall, load in zip(("asv run 1", "colbench", "asv run 2"), (first, ours, second),
                                            (first_wall, ours_wall, second_wall), loads, strict=True):
            print(f"{label}: {len(found)} cases, {wall:.0f} s (sum of its runs), {load_text(load)}", flush=True)
    else:
        first, first_wall, first_load = run_asv(args.asv, project, args.bench)
        print(f"asv run 1: {len(first)} cases, {first_wall:.0f} s, {load_text(first_load)}", flush=True)
        ours, ours_wall, ours_load = run_colbench(home, project / "benchmarks", args.bench,
                                                  f"asv-wall-{int(time.time())}")
        print(f"colbench: {len(ours)} cases, {ours_wall:.0f} s, {load_text(ours_load)}", flush=True)
        second, second_wall, second_load = run_asv(args.asv, project, args.bench)
        print(f"asv run 2: {len(second)} cases, {second_wall:.0f} s, {load_text(second_load)}", flush=True)

    both = sorted(set(first) & set(second) & set(ours))
    print("\n| case | asv run 1 | colbench | asv run 2 | colbench / mean of asv's | asv run 2 / run 1 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    agree = repeat = 0
    for key in both:
        a1, ours_value, a2 = first[key], ours[key], second[key]
        ratio, own = ours_value / ((a1 + a2) / 2), a2 / a1
        agree += abs(ratio - 1) <= 0.10
        repeat += abs(own - 1) <= 0.10
        label = f"`{key[0]}`" + (f" {', '.join(key[1])}" if key[1] else "")
        print(f"| {label} | {seconds(a1)} | {seconds(ours_value)} | {seconds(a2)} | {ratio:.2f} | {own:.2f} |")
    only = sorted((set(first) | set(second)) ^ set(ours))
    print(f"\n{len(both)} cases timed by both; colbench within ±10% of the mean of asv's two runs: {agree}; "
          f"asv's second run within ±10% of its first: {repeat}")
    if only:
        names = ", ".join(k[0] for k in only[:8]) + (" …" if len(only) > 8 else "")
        print(f"timed by one tool only: {len(only)} ({names})")
    ratios = [ours[k] / ((first[k] + second[k]) / 2) for k in both]
    if ratios:
        print(f"colbench / asv, geometric mean over the cases: "
              f"{statistics.geometric_mean(ratios):.3f}; median {statistics.median(ratios):.3f}")
    print(f"whole wall time: asv {first_wall:.0f} s and {second_wall:.0f} s, colbench {ours_wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
