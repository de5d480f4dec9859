"""Does `--measure instructions` decide? A/A on 10 real engine cases, an injected 2% of CPU work, and the cost.

    uv run python scripts/instructions_power.py [--blocks 12] [--trials 20] [--trial-blocks 8] [--extra 2%]
                                                [--rows 10000] [--iterations 3] [--skip-aa] [--skip-power]

Everything goes through the real `colbench` command, in a fresh COLBENCH_HOME (the data cache is shared through
COLBENCH_DATA when set):

1. A/A. One `colbench run` of 10 real engine cases — csv-read with pyarrow (Arrow table and data frame), polars,
   pandas and pandas' pyarrow parser; file-read of Parquet and Feather (zstd) with pyarrow into a table and a
   data frame; dataframe-conversion to pandas — on synthetic Fannie Mae twins of --rows rows, one thread, with
   two identical environments A and B interleaved in --blocks blocks, `--measure instructions`. Then
   `colbench compare A B --metric instructions` (default threshold 1%, Holm over the 10 cases). Goal: 0
   regressions. Repeatability: per case the CV of the per-process medians (A and B pooled) and the median CV of
   the iterations inside a process.
3. Power. --trials separate runs of csv-read pyarrow (Arrow table) with environments `base` and
   `slow = @current COLBENCH_EXTRA_WORK=2%` (real busy work inside the timed call, sized to 2% of the case's
   counted instructions: see src/colbench/workers/python/extra_work.py) in --trial-blocks blocks, each compared with
   `colbench compare base slow --metric instructions`. Goal: a regression every time.
2. Cost. Seconds per Valgrind process of each case (spawn to result, as the orchestrator saw it) and its CPU
   seconds, next to a plain wall-time process of the same case (a `--measure wall` run of 2 processes).

The load average is printed with the figures: costs in seconds depend on it, instruction counts do not.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from colbench.analysis.stats import wilson_interval

TEN_CASES = ["csv-read", "file-read", "dataframe-conversion",
             "--param", "source=fanniemae_2016Q4", "--threads", "1",
             "--param", "reader=pyarrow,polars,pandas,pandas-pyarrow", "--param", "output=arrow_table,dataframe",
             "--param", "compression=none", "--param", "engine=pyarrow", "--param", "format=parquet,feather",
             "--param", "codec=zstd", "--param", "direction=to_pandas"]
TRIAL_CASE = ["csv-read", "--param", "source=fanniemae_2016Q4", "--threads", "1", "--param", "reader=pyarrow",
              "--param", "output=arrow_table", "--param", "compression=none"]


def colbench(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    done = subprocess.run([sys.executable, "-m", "colbench", *args], capture_output=True, text=True, env=env)
    if check and done.returncode not in (0, 1):
        sys.exit(f"colbench {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} CPUs"


def records(home: Path, run: str) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.jsonl"
        colbench(home, "export", run, "--format", "jsonl", "-o", str(out))
        return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def label(record: dict) -> str:
    p = record["params"]
    if record["benchmark"] == "csv-read":
        return f"csv-read {p['reader']} → {p['output']}"
    if record["benchmark"] == "file-read":
        return f"file-read {p['format']} {p['engine']} → {p['output']}"
    return f"{record['benchmark']} {p.get('direction', '')}"


def cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else math.nan


def compare(home: Path, baseline: str, contender: str) -> list[dict]:
    done = colbench(home, "compare", baseline, contender, "--metric", "instructions", "--format", "json")
    return json.loads(done.stdout)["comparisons"]


def aa(home: Path, args: argparse.Namespace, common: list[str]) -> None:
    print(f"\n== 1. A/A: 10 real engine cases, {args.blocks} blocks of A and B, --measure instructions "
          f"({load()})", flush=True)
    started = time.perf_counter()
    colbench(home, "run", *TEN_CASES, *common, "--env", "A=@current", "--env", "B=@current",
             "--processes", str(args.blocks), "--measure", "instructions", "--run-name", "aa")
    elapsed = time.perf_counter() - started
    from colbench.analysis.comparison import short_labels

    comparisons = {c["key"]: c for c in compare(home, "aa:A", "aa:B")}
    verdicts = [c["verdict"] for c in comparisons.values()]
    results = [r for r in records(home, "aa") if r["status"] == "ok"]
    keys = {case_id: f"{text} [instructions]" for case_id, text in short_labels(results).items()}
    by_case: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_case[label(r)].append(r)
    print(f"{'case':<44} {'instructions':>14} {'CV processes':>13} {'CV in process':>14} {'ratio B/A':>10} "
          f"{'CI':>19}  verdict")
    for name, members in sorted(by_case.items()):
        medians = [statistics.median(r["samples"]["instructions"]) for r in members]
        inside = statistics.median(cv(r["samples"]["instructions"]) for r in members)
        c = comparisons.get(keys[members[0]["case_id"]])
        ci = f"[{c['ci_low']:.4f}, {c['ci_high']:.4f}]" if c and c["ci_low"] is not None else "-"
        print(f"{name:<44} {statistics.median(medians):>14,.0f} {cv(medians):>12.4%} {inside:>13.4%} "
              f"{c['ratio'] if c else math.nan:>10.4f} {ci:>19}  {c['verdict'] if c else '-'}")
    print("verdicts: " + ", ".join(f"{verdicts.count(v)} {v}" for v in sorted(set(verdicts)))
          + f"; regressions: {verdicts.count('regression')} (goal 0), improvements: {verdicts.count('improvement')}")
    print(f"{len(results)} Valgrind processes in {elapsed / 60:.1f} min ({load()})")
    cost(home, args, common, by_case)


def cost(home: Path, args: argparse.Namespace, common: list[str], by_case: dict[str, list[dict]]) -> None:
    print(f"\n== 2. Cost per process: Valgrind vs a plain wall-time process of the same case ({load()})", flush=True)
    colbench(home, "run", *TEN_CASES, *common, "--processes", "2", "--measure", "wall", "--run-name", "wall")
    plain: dict[str, list[dict]] = defaultdict(list)
    for r in records(home, "wall"):
        if r["status"] == "ok":
            plain[label(r)].append(r)
    print(f"{'case':<44} {'Valgrind s':>11} {'CPU s':>7} {'plain s':>8} {'CPU s':>7} {'× (CPU)':>8} "
          f"{'per case, 2×' + str(args.blocks) + ' processes':>28}")
    for name, members in sorted(by_case.items()):
        vg = [r["measure"]["instructions"]["process"] for r in members]
        vg_s = statistics.median(p["spawn_to_result_s"] for p in vg)
        vg_cpu = statistics.median(p["child_user_s"] + p["child_sys_s"] for p in vg)
        base = [r["process"] for r in plain.get(name, [])]
        base_s = statistics.median(p["spawn_to_result_s"] for p in base) if base else math.nan
        base_cpu = statistics.median(p["child_user_s"] + p["child_sys_s"] for p in base) if base else math.nan
        total = sum(p["spawn_to_result_s"] for p in vg)
        print(f"{name:<44} {vg_s:>11.1f} {vg_cpu:>7.1f} {base_s:>8.2f} {base_cpu:>7.2f} {vg_cpu / base_cpu:>7.0f}× "
              f"{total / 60:>23.1f} min")


def power(home: Path, args: argparse.Namespace, common: list[str]) -> None:
    print(f"\n== 3. Power: csv-read pyarrow, +{args.extra} CPU work injected, {args.trials} trials of "
          f"{args.trial_blocks} blocks ({load()})", flush=True)
    verdicts, ratios, seconds = [], [], []
    for trial in range(args.trials):
        started = time.perf_counter()
        name = f"trial{trial}"
        colbench(home, "run", *TRIAL_CASE, *common, "--env", "base=@current",
                 "--env", f"slow=@current COLBENCH_EXTRA_WORK={args.extra}", "--processes", str(args.trial_blocks),
                 "--measure", "instructions", "--run-name", name, "--seed", str(trial))
        seconds.append(time.perf_counter() - started)
        (c,) = compare(home, f"{name}:base", f"{name}:slow")
        verdicts.append(c["verdict"])
        ratios.append(c["ratio"])
        print(f"trial {trial + 1:>2}: {c['verdict']:<12} ratio {c['ratio']:.4f} CI [{c['ci_low']:.4f}, "
              f"{c['ci_high']:.4f}]  {seconds[-1]:.0f} s  {c['reason']}", flush=True)
    hits = verdicts.count("regression")
    low, high = wilson_interval(hits, len(verdicts))
    print(f"+{args.extra} of CPU work detected as a regression in {hits}/{len(verdicts)} trials (95% CI "
          f"{low:.0%}–{high:.0%}; goal {len(verdicts)}/{len(verdicts)}); measured ratio median "
          f"{statistics.median(ratios):.4f} (min {min(ratios):.4f}, max {max(ratios):.4f}); "
          f"{statistics.median(seconds):.0f} s per trial of {2 * args.trial_blocks} Valgrind processes ({load()})")




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=12, help="A/A blocks (12 = colbench's A/B default)")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--trial-blocks", type=int, default=8, help="blocks per power trial (8: the fewest that "
                        "can give a verdict on one case at alpha 0.01)")
    parser.add_argument("--extra", default="2%", help="CPU work injected on the slow side")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--skip-aa", action="store_true")
    parser.add_argument("--skip-power", action="store_true")
    parser.add_argument("--home", type=Path, help="COLBENCH_HOME to use (default: a fresh temporary one)")
    args = parser.parse_args()
    common = ["--param", f"rows={args.rows}", "--iterations", str(args.iterations), "--warmup", "1"]
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{valgrind}; Python {sys.version.split()[0]}; {load()}")
    with tempfile.TemporaryDirectory(prefix="colbench-instructions-") as tmp:
        home = args.home or Path(tmp)
        if not args.skip_aa:
            aa(home, args, common)
        if not args.skip_power:
            power(home, args, common)


if __name__ == "__main__":
    main()
