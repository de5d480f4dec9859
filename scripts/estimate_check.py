"""How close colbench's own estimates come to what its commands really take: estimate, run, print the ratio.

    uv run python scripts/estimate_check.py [--home DIR] [--only quick,pair,counting,bisect]

Each scenario first asks colbench what it expects (the dry run's total, `colbench.app.run.estimate`, or for a
bisect the expectation it states at the start, `bisect --format json`'s `expected_s`), then runs the command for
real in a subprocess and times it from start to exit. The scenarios are the ones issue #33 names:

- `quick`: `run quick` on a fresh home (a new COLBENCH_HOME: data, the Java worker's Maven build and all);
- `pair`: a case with two `--env` sides (pyarrow 17.0.0 and 21.0.0), wall time, with the defaults;
- `counting`: the same pair with `--measure instructions`;
- `bisect`: `bisect` of pyarrow 18.0.0 -> 19.0.1 on a 200k-row uncompressed Parquet read, with the defaults.

The pair, counting and bisect scenarios share one home (`--home`, default a new temporary directory), so the first
of them builds the environments and the later ones find them; the ratio is for what each command did. uv's own
package cache is the user's, as for any run. Figures need an idle machine: the load average is printed before and
after each scenario, and the estimate already stretches processes for the load it saw.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASE = ["file-read", "--param", "format=parquet", "--param", "codec=snappy", "--param", "engine=pyarrow",
        "--param", "source=fanniemae_2016Q4", "--param", "rows=100000", "--param", "output=arrow_table",
        "--param", "threads=1"]
PAIR = ["--env", "old=pyarrow==17.0.0", "--env", "new=pyarrow==21.0.0"]
BISECT_CASE = ["file-read", "--param", "format=parquet", "--param", "codec=uncompressed", "--param",
               "engine=pyarrow", "--param", "source=fanniemae_2016Q4", "--param", "rows=200000", "--param",
               "output=arrow_table", "--param", "threads=1"]
BISECT = [*BISECT_CASE, "--package", "pyarrow", "--good", "18.0.0", "--bad", "19.0.1"]


def load() -> str:
    try:
        return " ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "?"


def dry_run_seconds(args: list[str], home: Path) -> float:
    """The dry run's total for `colbench run ARGS`, as it prints it ("estimated time: 3 min 20 s ...")."""
    done = subprocess.run([sys.executable, "-m", "colbench", "run", *args, "--dry-run"], capture_output=True,
                          text=True, env=_env(home), check=False)
    if done.returncode != 0:
        raise SystemExit(f"dry run of {' '.join(args)} failed: {done.stderr[-1000:]}")
    text = " ".join(done.stdout.split())
    match = re.search(r"estimated time: (?:at least )?((?:[\d.]+ (?:h|min|s) ?)+)", text)
    if not match:
        raise SystemExit(f"no estimate in the dry run's output: {text[-500:]}")
    return sum(float(value) * {"h": 3600, "min": 60, "s": 1}[unit]
               for value, unit in re.findall(r"([\d.]+) (h|min|s)\b", match.group(1)))


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    return env


def timed(command: list[str], home: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "colbench", *command], capture_output=True, text=True,
                          env=_env(home), check=False)
    took = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"colbench {' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    return took, done


def report(name: str, estimate: float, real: float, before: str, extra: str = "") -> None:
    print(f"{name:>9}: estimate {estimate:7.0f} s, real {real:7.0f} s, ratio {estimate / real:5.2f}  "
          f"(load {before} -> {load()}){extra}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=None, help="the home the pair, counting and bisect share")
    parser.add_argument("--only", default="quick,pair,counting,bisect")
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    shared = args.home or Path(tempfile.mkdtemp(prefix="colbench-estimate-"))
    print(f"{os.cpu_count()} CPUs; shared home {shared}", flush=True)
    if "quick" in wanted:
        with tempfile.TemporaryDirectory(prefix="colbench-fresh-") as fresh:
            home, before = Path(fresh), load()
            estimate = dry_run_seconds(["quick"], home)
            real, _ = timed(["run", "quick"], home)
            report("quick", estimate, real, before, " (a fresh home)")
    for name, command in (("pair", ["run", *CASE, *PAIR]),
                          ("counting", ["run", *CASE, *PAIR, "--measure", "instructions"])):
        if name not in wanted:
            continue
        before = load()
        estimate = dry_run_seconds(command[1:], shared)
        real, done = timed(command, shared)
        looks = next((line for line in done.stdout.splitlines() if "look(s) in" in line), "")
        report(name, estimate, real, before, f"  [{looks.strip()}]" if looks else "")
    if "bisect" in wanted:
        before = load()
        real, done = timed(["bisect", *BISECT, "--format", "json"], shared)
        doc = json.loads(done.stdout)
        report("bisect", float(doc["expected_s"]), real, before,
               f"  [{doc['message']}; budget {doc['budget_s']:.0f} s]")


if __name__ == "__main__":
    main()
