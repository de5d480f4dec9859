"""Does `colbench explain` name a hidden slowdown? Extra work in one native function, injected from outside colbench.

    uv run python scripts/explain_goal.py [--rows 100000] [--crc-mb 4] [--processes 2] [--home DIR]

Everything goes through the real `colbench` command in a fresh COLBENCH_HOME (the data cache is shared through
COLBENCH_DATA when set):

1. The slowdown. A `sitecustomize.py` in a directory of its own (on the `slow` side's PYTHONPATH only) wraps
   `pyarrow.parquet.read_table` so that every call first runs zlib's CRC-32 over a --crc-mb MiB buffer: real work
   in one native function (`crc32_z` in Debian's libz.so.1) that colbench knows nothing about.
2. One run, two environments interleaved: `base = @current` and `slow = @current PYTHONPATH=… `, the E5 case
   `file-read` of a --rows-row Parquet file (snappy) into an Arrow table, one thread, `--measure instructions`.
3. `colbench explain RUN:base RUN:slow --format json`, timed from outside (fresh worker processes under
   callgrind for both sides: nothing is reused from the run).

Goals (issue #24): the injected function is among the top functions, the listed functions account for >= 80% of
the change, and `explain` of a 100k-row Parquet read takes <= 3 minutes on 2 cores. The load average is printed
with the figures: the seconds depend on it, the instruction counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

CASE = ["file-read", "--param", "format=parquet", "--param", "codec=snappy", "--param", "engine=pyarrow",
        "--param", "source=fanniemae_2016Q4", "--param", "output=arrow_table", "--threads", "1"]

SITECUSTOMIZE = textwrap.dedent('''\
    """Injected by scripts/explain_goal.py: CRC-32 of a buffer before every pyarrow.parquet.read_table call."""
    import os
    import zlib

    import pyarrow.parquet as _pq

    _BUFFER = bytes(int(float(os.environ.get("EXPLAIN_GOAL_CRC_MB", "4")) * 2**20))
    _read_table = _pq.read_table


    def read_table(*args, **kwargs):
        zlib.crc32(_BUFFER)
        return _read_table(*args, **kwargs)


    _pq.read_table = read_table
''')


def colbench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "colbench", *args], env=env, text=True, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--crc-mb", type=float, default=4.0)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="colbench-explain-goal-"))
    inject = Path(tempfile.mkdtemp(prefix="explain-goal-inject-"))
    (inject / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    print(f"home {home}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    started = time.monotonic()
    run = colbench("run", *CASE, "--param", f"rows={args.rows}", "--measure", "instructions",
                   "--processes", str(args.processes), "--env", "base=@current",
                   "--env", f"slow=@current PYTHONPATH={inject} EXPLAIN_GOAL_CRC_MB={args.crc_mb}",
                   "--run-name", "explain-goal", env=env)
    if run.returncode not in (0, 1):
        print(run.stdout[-2000:], run.stderr[-2000:], sep="\n")
        return 2
    runs = json.loads(colbench("show", "--runs", "--format", "json", env=env).stdout)
    run_id = runs[0]["run_id"]
    print(f"run {run_id}: {time.monotonic() - started:.0f} s ({args.processes} processes a side, instructions)")

    started = time.monotonic()
    explained = colbench("explain", f"{run_id}:base", f"{run_id}:slow", "--format", "json", env=env)
    seconds = time.monotonic() - started
    if explained.returncode != 0:
        print(explained.stdout[-2000:], explained.stderr[-2000:], sep="\n")
        return 2
    doc = json.loads(explained.stdout)
    case = doc["cases"][0]
    functions = case["functions"]
    crc = next((i for i, f in enumerate(functions) if "crc32" in f["function"]), None)
    print(f"instructions of the timed call: {case['baseline']['total']:,} → {case['contender']['total']:,} "
          f"({case['ratio'] - 1:+.2%}); verdict: {case['verdict']}")
    for rank, f in enumerate(functions[:8], 1):
        print(f"  {rank}. {f['short'][:70]:70} {f['library'][:24]:24} {f['self']['change']:>+14,} "
              f"{f['share']:+.1%}")
    share = case["listed_share"]
    goals = {
        "the injected function (zlib crc32) is among the top functions":
            crc is not None and crc < 5,
        f"the listed functions account for >= 80% of the change ({share:.1%})": share is not None and share >= 0.8,
        f"explain took <= 3 minutes ({seconds:.0f} s)": seconds <= 180,
    }
    if crc is not None:
        print(f"the injected work: rank {crc + 1}, {functions[crc]['function']} in {functions[crc]['library']}, "
              f"{functions[crc]['share']:.1%} of the change")
    for goal, met in goals.items():
        print(f"{'met' if met else 'MISSED'}: {goal}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
