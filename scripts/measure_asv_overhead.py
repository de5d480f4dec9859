"""What an asv benchmark's case costs beside a plain worker's: colbench's per-case overhead on an asv suite.

    uv run python scripts/measure_asv_overhead.py [--processes 20] [--rounds 3]

Each round is one `colbench run` of two cases whose timed call does nothing: the built-in `placebo` (duration 0,
the plain worker) and an asv benchmark of a suite written here (`time_nothing`, `number = 1`, no setup: what is
measured is asv's runner imported, the suite module found and set up), `--processes` fresh workers each, one
iteration, no warm-up. It prints, per case, the median and IQR of the orchestrator's spawn-to-result time and of the
worker's own CPU time (user + sys), and the asv case's difference from the placebo's; rounds alternate the order of
the two cases, so the load of the moment hits both. On a loaded machine the wall figures mostly measure waiting for
a CPU; the CPU times do not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE = '''def time_nothing():
    pass


time_nothing.number = 1
'''


def one_round(home: Path, suite: Path, processes: int, asv_first: bool) -> dict[str, list[dict]]:
    store = home / "overhead.duckdb"
    targets = [f"asv:{suite}", "placebo"] if asv_first else ["placebo", f"asv:{suite}"]
    cmd = [sys.executable, "-m", "colbench", "run", *targets, "--param", "duration=0", "--param", "threads=1",
           "--processes", str(processes), "--iterations", "1", "--warmup", "0", "--measure", "wall", "--store",
           str(store), "--run-name", "overhead"]
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    out = home / "rows.jsonl"
    subprocess.run([sys.executable, "-m", "colbench", "export", "latest", "-f", "jsonl", "-o", str(out), "--store",
                    str(store)], check=True, capture_output=True, text=True, env=env)
    rows: dict[str, list[dict]] = {"placebo": [], "asv": []}
    for line in out.read_text().splitlines():
        row = json.loads(line)
        if row["status"] == "ok":
            rows["placebo" if row["benchmark"] == "placebo" else "asv"].append(row["process"])
    return rows


def summary(values: list[float]) -> str:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return f"{statistics.median(values) * 1000:7.1f} ms (IQR {q[0] * 1000:.1f}-{q[2] * 1000:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="colbench-asv-overhead-") as tmp:
        home, suite = Path(tmp) / "home", Path(tmp) / "suite" / "benchmarks"
        suite.mkdir(parents=True)
        (suite / "__init__.py").write_text("")
        (suite / "bench_nothing.py").write_text(SUITE)
        found: dict[str, list[dict]] = {"placebo": [], "asv": []}
        for index in range(args.rounds):
            for name, rows in one_round(home, suite, args.processes, asv_first=index % 2 == 0).items():
                found[name] += rows
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    medians = {}
    for name, rows in found.items():
        wall = [r["spawn_to_result_s"] for r in rows]
        cpu = [r["child_user_s"] + r["child_sys_s"] for r in rows]
        medians[name] = (statistics.median(wall), statistics.median(cpu))
        print(f"{name:8s} n={len(rows):3d}  spawn to result {summary(wall)}   worker CPU {summary(cpu)}")
    wall_diff = (medians["asv"][0] - medians["placebo"][0]) * 1000
    cpu_diff = (medians["asv"][1] - medians["placebo"][1]) * 1000
    print(f"asv case - plain worker: {wall_diff:+.1f} ms wall, {cpu_diff:+.1f} ms worker CPU (medians)")


if __name__ == "__main__":
    main()
