"""How long does a `colbench watch` pass with nothing new take? (issue #34: <= 5 s on the 2-core VM)

    uv run python scripts/measure_watch_pass.py [--passes 10] [--home DIR]

Everything runs through the real `colbench` command in a fresh COLBENCH_HOME:

1. A local package index: pypiserver on 127.0.0.1 serving two releases of a tiny library (the watch tests' own,
   tests/app/watch_probe.py), and a user-written benchmark that imports it.
2. The store learns that the newest release was watched: written through the store as a first pass would record it
   (`--real-first-pass`: by a real first pass, in wall time, two processes a side, which builds two environments;
   the figures below do not depend on how the record got there).
3. `--passes` passes with nothing new, one after the other, each timed from outside (the command's whole life:
   interpreter start, imports, the store, the index query); beside them, in the same run and alternating with them,
   `colbench --version` (the command's start-up alone) and one GET of the index page (the network part).

It prints each figure's median and range, the share of a pass that is start-up, and the load average: the seconds
depend on the machine's load, the ratios much less.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.app.watch_probe import BENCHMARK, NAME, build_wheel, install_benchmark  # noqa: E402
from tests.index_server import IndexServer  # noqa: E402


def timed(command: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - started, done


def show(name: str, values: list[float]) -> str:
    return f"{name}: median {statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f}, " \
           f"n={len(values)})"


def record_first_pass(home: Path) -> None:
    """What a first pass of `watch BENCHMARK --package NAME --measure wall` records: 1.0.0 its baseline, 1.1.0."""
    os.environ["COLBENCH_HOME"] = str(home)
    from colbench.app.stores import store_at
    from colbench.app.watch import WatchRequest, watch_id
    from colbench.machine.facts import machine_info
    from colbench.model.watch import WatchedRelease

    machine = machine_info()
    key = watch_id(WatchRequest(targets=(BENCHMARK,), packages=(NAME,)), NAME, ("wall",), machine["machine_id"])
    store = store_at(None)
    for version, verdict in (("1.0.0", "baseline"), ("1.1.0", "no change")):
        store.record_watch(WatchedRelease(watch_id=key, package=NAME, version=version, verdict=verdict,
                                          machine_id=machine["machine_id"], machine_name=machine["name"],
                                          watched_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
                                          targets=(BENCHMARK,), baseline="1.0.0" if version == "1.1.0" else None))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--real-first-pass", action="store_true", help="record the newest release by a real pass")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="colbench-watch-pass-"))
    home = args.home or root / "home"
    for version in ("1.0.0", "1.1.0"):
        build_wheel(root / "wheels", version)
    site = install_benchmark(root / "site")
    env = {**os.environ, "COLBENCH_HOME": str(home), "PYTHONPATH": str(site)}
    env.pop("COLBENCH_STORE", None)
    colbench = [sys.executable, "-m", "colbench"]
    index = IndexServer(root / "wheels").start()
    try:
        watch = [*colbench, "watch", BENCHMARK, "--package", NAME, "--index", index.url, "--measure", "wall",
                 "--processes", "2", "--iterations", "2"]
        if args.real_first_pass:
            seconds, first = timed(watch, env)
            if first.returncode not in (0, 1) or "stopped" in first.stdout:
                raise SystemExit(f"the first pass failed ({first.returncode}): {first.stdout[-2000:]}"
                                 f"{first.stderr[-2000:]}")
            print(f"first pass (1.0.0 against 1.1.0, environments built, wall time): {seconds:.1f} s")
        else:
            record_first_pass(home)
        passes, startups, gets = [], [], []
        for _ in range(args.passes):
            seconds, done = timed(watch, env)
            if done.returncode != 0 or "nothing new" not in done.stdout:
                raise SystemExit(f"a pass with nothing new did something else: {done.stdout}{done.stderr}")
            passes.append(seconds)
            startups.append(timed([*colbench, "--version"], env)[0])
            started = time.perf_counter()
            with urllib.request.urlopen(f"{index.url}/{NAME}/", timeout=30) as page:
                page.read()
            gets.append(time.perf_counter() - started)
    finally:
        index.stop()
    print(show("pass with nothing new, whole command", passes))
    print(show("colbench --version (start-up alone)", startups))
    print(show("GET of the index page", gets))
    share = statistics.median(startups) / statistics.median(passes)
    print(f"start-up is {share:.0%} of a pass; the goal is <= 5 s: "
          f"{'met' if statistics.median(passes) <= 5 else 'NOT met'} (the slowest pass: {max(passes):.2f} s)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")


if __name__ == "__main__":
    main()
