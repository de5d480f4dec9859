"""Measure what one isolated execution costs: `placebo` with duration 0, spawn to result, over N processes.

    uv run python scripts/measure_overhead.py [--processes 20]

Prints the median and IQR of the orchestrator-side spawn-to-result time, and of the worker's own start-up
(child CPU time), from a real run stored in a temporary store.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "overhead.duckdb")
        subprocess.run([sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0", "--processes",
                        str(args.processes), "--iterations", "1", "--warmup", "0", "--store", store],
                       check=True, capture_output=True)
        out = Path(tmp) / "r.jsonl"
        subprocess.run([sys.executable, "-m", "colbench", "export", "--format", "jsonl", "--output", str(out),
                        "--store", store], check=True, capture_output=True)
        docs = [json.loads(line) for line in out.read_text().splitlines()]
    spawn = sorted(d["process"]["spawn_to_result_s"] for d in docs)
    cpu = sorted(d["process"]["child_user_s"] + d["process"]["child_sys_s"] for d in docs)
    q = statistics.quantiles(spawn, n=4)
    print(f"isolated execution of placebo(duration=0), {len(spawn)} processes:")
    median = statistics.median(spawn)
    print(f"  spawn → result: median {median * 1e3:.1f} ms, IQR {q[0] * 1e3:.1f}–{q[2] * 1e3:.1f} ms, "
          f"min {spawn[0] * 1e3:.1f} ms, max {spawn[-1] * 1e3:.1f} ms")
    print(f"  worker CPU (user+sys): median {statistics.median(cpu) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
