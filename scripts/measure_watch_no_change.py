"""How many counting processes a side does a watch pass over an unchanged release take? (issue #46, point 3)

    uv run python scripts/measure_watch_no_change.py [--home DIR] [--calibrate | --machine-store results.duckdb]

Everything runs through the real `colbench` command in a fresh COLBENCH_HOME, offline: a local package index
(pypiserver on 127.0.0.1) serving releases of the watch tests' tiny library (tests/app/watch_probe.py), byte for byte
the same code under each version, and the user-written benchmark that imports it. Defaults only
(`--measure instructions`, threshold 0.25%, the watch's own budget):

1. pass 1: 1.0.0 is the baseline, 1.1.0 the unchanged release, the case never counted on this machine before
   (with `--calibrate`: after `colbench calibrate watchprobe-crc --measure instructions --processes 6`, 1.0.0 on the
   PYTHONPATH, which counts the case's spread first; with `--machine-store FILE`: the home starts with a copy of
   that store, other cases counted on this machine, so the case has no spread of its own but the machine has some);
2. 1.2.0 published, unchanged; pass 2: compared with 1.1.0, the case now has pass 1's processes as its history.

Per pass it prints the verdict, the processes a side the run counted, the ratio and interval, the pass's wall time
and the load average: processes are the figure; seconds depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.app.watch_probe import BENCHMARK, NAME, build_wheel, install_benchmark  # noqa: E402
from tests.index_server import IndexServer  # noqa: E402


def colbench(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "colbench", *args], env=env, capture_output=True, text=True,
                          timeout=3600)
    return time.perf_counter() - started, done


def processes_a_side(home: Path, run_id: str) -> dict[str, int]:
    os.environ["COLBENCH_HOME"] = str(home)
    from colbench.app.stores import store_at
    from colbench.store.base import ResultQuery

    counts: dict[str, int] = {}
    for r in store_at(None).results(ResultQuery(run_ids=(run_id,))):
        counts[r.env_name] = counts.get(r.env_name, 0) + 1
    return counts


def watch_pass(name: str, index: IndexServer, env: dict[str, str], home: Path) -> None:
    load = os.getloadavg()[0]
    seconds, done = colbench(["watch", BENCHMARK, "--package", NAME, "--index", index.url, "--measure", "instructions",
                              "--format", "json"], env)
    if done.returncode != 0:
        print(f"{name}: rc {done.returncode}\n{done.stderr[-2000:]}", flush=True)
        return
    (package,) = json.loads(done.stdout)["packages"]
    if not package["releases"]:
        print(f"{name}: nothing measured: {package.get('stopped')}", flush=True)
    for release in package["releases"]:
        if release["verdict"] == "baseline":
            continue
        (case,) = release["cases"]
        sides = processes_a_side(home, release["run_id"])
        print(f"{name}: {release['baseline']} -> {release['version']}: {release['verdict']}, processes a side "
              f"{sides}, ratio {case['ratio']:.5f} [{case['ci_low']:.5f}, {case['ci_high']:.5f}], counts "
              f"{case['baseline_median']:,.0f} -> {case['contender_median']:,.0f}; the pass {seconds:.0f} s at load "
              f"{load:.1f}-{os.getloadavg()[0]:.1f}; reason: {case.get('reason')}; notes: {release.get('notes')}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--calibrate", action="store_true", help="calibrate the case before the first pass")
    parser.add_argument("--machine-store", type=Path, help="start the home with a copy of this results.duckdb: "
                        "other cases counted on this machine (the watched case must not be among them)")
    parser.add_argument("--colbench-src", help="run the colbench of this src folder (e.g. a checkout from before a "
                        "change, for its figures)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="colbench-watch-no-change-"))
    home = args.home or root / "home"
    for version in ("1.0.0", "1.1.0"):
        build_wheel(root / "wheels", version)
    site = install_benchmark(root / "site")
    path = os.pathsep.join([*([args.colbench_src] if args.colbench_src else []), str(site)])
    env = {**os.environ, "COLBENCH_HOME": str(home), "PYTHONPATH": path}
    env.pop("COLBENCH_STORE", None)
    print(f"colbench at {args.colbench_src or ROOT}, home {home}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
          flush=True)
    if args.machine_store:
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.machine_store, home / "results.duckdb")
    index = IndexServer(root / "wheels").start()
    try:
        if args.calibrate:
            library = root / "library"
            with zipfile.ZipFile(root / "wheels" / f"{NAME}-1.0.0-py3-none-any.whl") as wheel:
                wheel.extractall(library)
            seconds, done = colbench(["calibrate", BENCHMARK, "--measure", "instructions", "--processes", "6"],
                                     {**env, "PYTHONPATH": f"{path}{os.pathsep}{library}"})
            print(f"calibrate: rc {done.returncode} in {seconds:.0f} s\n{done.stdout[-1500:]}", flush=True)
        watch_pass("pass 1", index, env, home)
        build_wheel(root / "wheels", "1.2.0")
        watch_pass("pass 2", index, env, home)
    finally:
        index.stop()


if __name__ == "__main__":
    main()
