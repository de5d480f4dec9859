"""Does `colbench explain --metric memory` name a hidden copy, and how long does it take? (issue #38)

    uv run python scripts/explain_memory_goal.py [--rows 200000] [--processes 3] [--home DIR]

Everything goes through the real `colbench` command in a fresh COLBENCH_HOME:

1. The regression. A `sitecustomize.py` on the `copy` side's PYTHONPATH only wraps `pyarrow.parquet.read_table`
   so that every call makes a copy of the table it read (`keep_a_copy`: the table as two chunks, combined) and
   keeps it alive until the call returns.
2. One run, two environments interleaved: `base = @current` and `copy = @current PYTHONPATH=…`, the E5 case
   `file-read` of a --rows-row Parquet file (snappy) into an Arrow table, one thread, for pyarrow's default pool
   and `allocator=system`.
3. `colbench explain RUN:base RUN:copy --metric memory --format json`, timed from outside (fresh heaptrack workers
   for both sides of both cases: nothing is reused from the run).

Goals: `arrow::ConcatenateBuffers` (what combine_chunks allocates the copy with) at rank 1 with the listed
functions accounting for >= 80% of the peak's change, for both pools; the peak RSS the run recorded, less each
side's traced peak, the same on both sides within 10% of the peak RSS; explain <= 3 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASE = ["file-read", "--param", "format=parquet", "--param", "codec=snappy", "--param", "engine=pyarrow",
        "--param", "source=fanniemae_2016Q4", "--param", "output=arrow_table", "--param", "allocator=default,system",
        "--threads", "1"]

SITECUSTOMIZE = '''\
"""Planted by scripts/explain_memory_goal.py: every read_table keeps a copy of its table until it returns."""
import pyarrow as _pa
import pyarrow.parquet as _pq

_read_table = _pq.read_table


def keep_a_copy(table):
    half = table.num_rows // 2  # two chunks, so combine_chunks copies every column
    return _pa.concat_tables([table.slice(0, half), table.slice(half)]).combine_chunks()


def read_table(*args, **kwargs):
    table = _read_table(*args, **kwargs)
    copy = keep_a_copy(table)  # alive until this call returns
    del copy
    return table


_pq.read_table = read_table
'''


def colbench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "colbench", *args], env=env, text=True, capture_output=True)


def mb(value: float) -> str:
    return f"{value / 1e6:.1f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="colbench-explain-memory-"))
    plant = Path(tempfile.mkdtemp(prefix="explain-memory-plant-"))
    (plant / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    print(f"home {home}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    started = time.monotonic()
    run = colbench("run", *CASE, "--param", f"rows={args.rows}", "--processes", str(args.processes),
                   "--env", "base=@current", "--env", f"copy=@current PYTHONPATH={plant}",
                   "--run-name", "explain-memory-goal", env=env)
    if run.returncode not in (0, 1):
        print(run.stdout[-2000:], run.stderr[-2000:], sep="\n")
        return 2
    run_id = json.loads(colbench("show", "--runs", "--format", "json", env=env).stdout)[0]["run_id"]
    print(f"run {run_id}: {time.monotonic() - started:.0f} s ({args.processes} processes a side and pool)")

    started = time.monotonic()
    explained = colbench("explain", f"{run_id}:base", f"{run_id}:copy", "--metric", "memory", "--format", "json",
                         env=env)
    seconds = time.monotonic() - started
    if explained.returncode != 0:
        print(explained.stdout[-2000:], explained.stderr[-2000:], sep="\n")
        return 2
    goals: dict[str, bool] = {}
    for case in json.loads(explained.stdout)["cases"]:
        pool = "system" if "allocator=system" in case["label"] else "default"
        if case["error"]:
            print(f"{pool}: error: {case['error']}")
            goals[f"{pool}: explained"] = False
            continue
        memory = case["memory"]
        a, b = case["baseline"]["total"], case["contender"]["total"]
        rss = memory["recorded_peak_rss_bytes"]
        churn = memory["churn_bytes"]
        print(f"\n{pool} pool ({memory['measured']['baseline'].get('pool')}): traced peak {mb(a)} → {mb(b)} "
              f"({b / a - 1:+.1%}); churn {mb(churn['baseline'])} → {mb(churn['contender'])}; verdict: "
              f"{case['verdict']}")
        for rank, f in enumerate(case["functions"][:5], 1):
            print(f"  {rank}. {f['short'][:60]:60} {f['library'][:14]:14} {f['self']['change'] / 1e6:+9.2f} MB "
                  f"{f['share']:+.1%}")
        top, share = case["functions"][0], case["listed_share"]
        outside_a, outside_b = rss["baseline"] - a, rss["contender"] - b
        gap = abs(outside_b - outside_a) / max(rss["baseline"], rss["contender"])
        change_gap = abs((rss["contender"] - rss["baseline"]) - (b - a)) / (b - a)
        print(f"  peak RSS recorded {mb(rss['baseline'])} → {mb(rss['contender'])} (change "
              f"{mb(rss['contender'] - rss['baseline'])}, the traced peak's {mb(b - a)}: {change_gap:.1%} apart); "
              f"less the traced peak {mb(outside_a)} → {mb(outside_b)}: {gap:.1%} of the peak RSS apart")
        goals[f"{pool}: rank 1 is arrow::ConcatenateBuffers ({top['short']})"] = \
            top["function"].startswith("arrow::ConcatenateBuffers")
        goals[f"{pool}: the listed functions account for >= 80% of the peak's change ({share:.1%})"] = share >= 0.8
        goals[f"{pool}: peak RSS less the traced peak agree within 10% of the peak RSS ({gap:.1%})"] = gap <= 0.10
    goals[f"explain took <= 3 minutes ({seconds:.0f} s, both cases, four fresh heaptrack workers)"] = seconds <= 180
    print()
    for goal, met in goals.items():
        print(f"{'met' if met else 'MISSED'}: {goal}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
