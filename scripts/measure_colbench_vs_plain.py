"""Does colbench measure what plain code measures? The same call timed both ways, interleaved.

    uv run python scripts/measure_colbench_vs_plain.py [--rounds 10] [--rows 1000000] [--threads 2]

Each round runs one `colbench run file-read` process (pyarrow, Parquet/snappy Fannie Mae twin, Arrow table out)
and one fresh plain Python process that times `pyarrow.parquet.read_table` on the same cached file the same way
(same thread settings, file read once untimed, one warm-up, then N timed calls with perf_counter_ns). The order
within a round alternates. It prints the per-process medians of both, the ratio colbench / plain of their
medians with a bootstrap 95 % interval, the spread of each arm's process medians, and the machine load; a harness
that disturbs what it measures shows as a ratio above 1, one that adds noise as a wider spread. Uses the data cache of
$COLBENCH_HOME (the twin is generated once) and a temporary store.
With `--baseline DIR` (the `src` directory of another colbench checkout) a third arm runs that colbench too.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PLAIN = r"""
import os, sys, time, statistics
threads, iterations, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for var in ("OMP_NUM_THREADS", "ARROW_NUM_THREADS", "ARROW_IO_THREADS"):
    os.environ[var] = str(threads)
os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:threads])
import pyarrow as pa, pyarrow.parquet as pq
pa.set_cpu_count(threads); pa.set_io_thread_count(threads)
with open(path, "rb") as f:
    while f.read(8 << 20):
        pass
times = []
for i in range(iterations + 1):
    t0 = time.perf_counter_ns(); table = pq.read_table(path, memory_map=False); t1 = time.perf_counter_ns()
    if i:
        times.append((t1 - t0) / 1e9)
    del table
print(statistics.median(times))
"""


def colbench_round(args: argparse.Namespace, store: str, src: str | None = None) -> tuple[float, str]:
    """(median wall_s of one worker process, its input file) from a real `colbench run` (of `src` if given)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    params = ["engine=pyarrow", "format=parquet", "codec=snappy", "source=fanniemae_2016Q4",
              f"rows={args.rows}", f"threads={args.threads}", "output=arrow_table"]
    command = [sys.executable, "-m", "colbench", "run", "file-read", "--processes", "1", "--iterations",
               str(args.iterations), "--warmup", "1", "--store", store]
    for param in params:
        command += ["--param", param]
    subprocess.run(command, check=True, capture_output=True, env=env)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.jsonl"
        subprocess.run([sys.executable, "-m", "colbench", "export", "--format", "jsonl", "--output", str(out),
                        "--store", store], check=True, capture_output=True)
        latest = max((json.loads(line) for line in out.read_text().splitlines()), key=lambda r: r["timestamp"])
    if latest["status"] != "ok":
        raise SystemExit(f"colbench's case failed: {latest['error']}")
    return latest["summary"]["wall_s"]["median"], latest["inputs"]["data"]["path"]


def plain_round(args: argparse.Namespace, path: str) -> float:
    done = subprocess.run([sys.executable, "-c", PLAIN, str(args.threads), str(args.iterations), path],
                          check=True, capture_output=True, text=True)
    return float(done.stdout.strip())


def ratio_interval(ours: list[float], plain: list[float], draws: int = 2000) -> tuple[float, float]:
    rng = random.Random(1)
    ratios = sorted(statistics.median(rng.choices(ours, k=len(ours))) /
                    statistics.median(rng.choices(plain, k=len(plain))) for _ in range(draws))
    return ratios[int(0.025 * draws)], ratios[int(0.975 * draws)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=5, help="timed calls per process")
    parser.add_argument("--baseline", default=None, help="src directory of another colbench: a third arm")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3]
    arms: dict[str, list[float]] = {"colbench": [], "plain": []}
    if args.baseline:
        arms["baseline"] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "vs-plain.duckdb")
        _, path = colbench_round(args, store)  # also makes the input file; not counted
        for index in range(args.rounds):
            order = list(arms) if index % 2 == 0 else list(reversed(arms))
            for arm in order:
                if arm == "plain":
                    arms[arm].append(plain_round(args, path))
                else:
                    arms[arm].append(colbench_round(args, store, args.baseline if arm == "baseline" else None)[0])
    ours, plain = arms["colbench"], arms["plain"]
    low, high = ratio_interval(ours, plain)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    print(f"pyarrow.parquet.read_table, Fannie Mae twin {args.rows:,} rows, snappy, {args.threads} threads; "
          f"{args.rounds} interleaved rounds; load before {load}, after {load_after}")
    for label, values in arms.items():
        q = statistics.quantiles(values, n=4)
        spread = statistics.stdev(math.log(v) for v in values)
        print(f"  {label:8s}: per-process medians: median {statistics.median(values) * 1e3:.1f} ms, "
              f"IQR {q[0] * 1e3:.1f}–{q[2] * 1e3:.1f} ms, spread between processes (sd of log) {spread:.1%}")
    print(f"  ratio colbench / plain (medians): {statistics.median(ours) / statistics.median(plain):.3f} "
          f"(bootstrap 95% {low:.3f}–{high:.3f})")
    if args.baseline:
        base = arms["baseline"]
        low, high = ratio_interval(base, plain)
        print(f"  ratio baseline / plain (medians): {statistics.median(base) / statistics.median(plain):.3f} "
              f"(bootstrap 95% {low:.3f}–{high:.3f})")
    print(f"  file: {path} ({os.path.getsize(path) / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
