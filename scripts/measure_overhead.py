"""Measure what one isolated execution costs: `placebo` with duration 0, spawn to result, over N processes.

    uv run python scripts/measure_overhead.py [--processes 20] [--rounds 1] [--baseline OTHER/src]

Prints the median and IQR of the orchestrator-side spawn-to-result time, and of the worker's own start-up
(child CPU time), from real runs stored in a temporary store. With `--baseline DIR` (the `src` directory of
another colbench checkout, e.g. from `git archive main src | tar -x -C /tmp/base`), rounds of this checkout
and of the baseline alternate, so machine load hits both alike, and the ratio of the medians is printed.
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


def describe(label: str, processes: list[dict]) -> float:
    spawn = sorted(p["spawn_to_result_s"] for p in processes)
    cpu = sorted(p["child_user_s"] + p["child_sys_s"] for p in processes)
    q = statistics.quantiles(spawn, n=4)
    median = statistics.median(spawn)
    print(f"{label}: isolated execution of placebo(duration=0), {len(spawn)} processes:")
    print(f"  spawn → result: median {median * 1e3:.1f} ms, IQR {q[0] * 1e3:.1f}–{q[2] * 1e3:.1f} ms, "
          f"min {spawn[0] * 1e3:.1f} ms, max {spawn[-1] * 1e3:.1f} ms")
    print(f"  worker CPU (user+sys): median {statistics.median(cpu) * 1e3:.1f} ms")
    return median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=20, help="worker processes per round")
    parser.add_argument("--rounds", type=int, default=1, help="rounds (alternating with the baseline's)")
    parser.add_argument("--baseline", default=None, help="src directory of another colbench to compare with")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else "?"
    print(f"load average {load} on {os.cpu_count()} CPUs")
    mine: list[dict] = []
    base: list[dict] = []
    for _ in range(args.rounds):
        if args.baseline:
            base += one_round(args.processes, args.baseline)
        mine += one_round(args.processes, None)
    median = describe("this checkout", mine)
    if args.baseline:
        base_median = describe(f"baseline {args.baseline}", base)
        print(f"ratio this / baseline (medians): {median / base_median:.2f}")


if __name__ == "__main__":
    main()
