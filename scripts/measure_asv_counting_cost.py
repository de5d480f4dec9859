"""What a counting process of an asv case costs against the same work written as a colbench `Benchmark` (#43:
"a counting process of an asv case costs no more CPU than the same work written as a colbench Benchmark").

    uv run python scripts/measure_asv_counting_cost.py [--processes 4] [--rounds 2]

The work is one loop, 200,000 rounds of `acc = (acc * 31 + i) & 0xFFFF`: the built-in `placebo` (`work=200000
duration=0`, two cases: setup_work=0 and 1, so a run holds three cases and counts from suite servers by default)
and an asv `time_busy` with the same loop, in a suite written to a temporary folder. Each round makes two runs in
one temporary home, `--measure instructions --no-until-decided`: one with the default (suite servers from three
cases on) and one with `--fresh-counts`, in alternating order, so the machine's speed hits both alike.

Prints per case and mode the median CPU of a counting process (its own: `child_user_s + child_sys_s` from
`wait4`), its phases, the counts, and for served processes what their servers cost once (`setup_cpu_s`), spread
over the processes each served. Compare within one run of this script: the CPU seconds move with the VM's speed.
Then, per mode, the ratio of the asv case's median CPU a process (and counting phase) to the placebo's, with a 95%
bootstrap interval over the processes (10,000 resamples of each side): an interval that holds 1.00 is no difference
this many processes can see.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

BUSY_SUITE = """\
def time_busy():
    acc = 0
    for i in range(200000):
        acc = (acc * 31 + i) & 0xFFFF
    return acc


time_busy.number = 1
"""
MODES = {"served": [], "fresh": ["--fresh-counts"]}


def write_suite(folder: Path) -> Path:
    suite = folder / "benchmarks"
    suite.mkdir(parents=True)
    (suite / "__init__.py").write_text("")
    (suite / "bench_busy.py").write_text(BUSY_SUITE)
    return suite


def one_run(home: Path, suite: Path, mode: str, processes: int) -> list[dict]:
    """The counting records of one run of the three cases, as exported."""
    env = dict(os.environ, COLBENCH_HOME=str(home))
    env.pop("COLBENCH_STORE", None)
    store = home / f"{mode}.duckdb"
    subprocess.run([sys.executable, "-m", "colbench", "run", "placebo", f"asv:{suite}", "--param", "duration=0",
                    "--param", "work=200000", "--param", "setup_work=0,1", "--measure", "instructions",
                    "--processes", str(processes), "--no-until-decided", "--store", str(store), *MODES[mode]],
                   check=True, capture_output=True, env=env)
    out = home / f"{mode}.jsonl"
    subprocess.run([sys.executable, "-m", "colbench", "export", "--format", "jsonl", "--output", str(out),
                    "--store", str(store)], check=True, capture_output=True, env=env)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    out.unlink()
    store.unlink()
    for row in rows:
        if row["status"] != "ok":
            raise SystemExit(f"{row['benchmark']}: {row['status']} {row.get('error')}")
    return rows


def cpu(row: dict) -> float:
    process = row["measure"]["instructions"]["process"]
    return process["child_user_s"] + process["child_sys_s"]


def describe(rows: list[tuple[str, dict]]) -> None:
    by_case: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for mode, row in rows:
        case = "asv time_busy" if row["benchmark"] != "placebo" else "colbench placebo"
        by_case[(case, mode)].append(row)
    print(f"{'case':<18} {'mode':<7} {'n':>3} {'CPU a process':>14} {'range':>13} {'+ servers once':>15} "
          f"{'setup':>6} {'warmup':>7} {'counting':>9}  counts")
    for (case, mode), group in sorted(by_case.items()):
        cpus = sorted(cpu(r) for r in group)
        servers = {(r["run_id"], s["pid"]): s["setup_cpu_s"] for r in group
                   if (s := r["measure"]["instructions"].get("server"))}
        spread = sum(servers.values()) / len(group) if servers else 0.0
        phases = {k: statistics.median(r["measure"]["instructions"]["phases"].get(k, 0.0) for r in group)
                  for k in ("setup", "warmup", "counting")}
        counts = sorted({round(c / 1e6, 2) for r in group for c in r["samples"]["instructions"]})
        print(f"{case:<18} {mode:<7} {len(group):>3} {statistics.median(cpus):>12.2f} s "
              f"{cpus[0]:>5.2f}-{cpus[-1]:<5.2f}s {spread:>13.2f} s {phases['setup']:>5.2f}s {phases['warmup']:>6.2f}s "
              f"{phases['counting']:>8.2f}s  {counts[0]}-{counts[-1]} M")


def ratio_interval(asv: list[float], placebo: list[float], resamples: int = 10_000) -> tuple[float, float, float]:
    """The ratio of the medians, asv over placebo, and its 95% percentile bootstrap interval."""
    import numpy as np

    rng = np.random.default_rng(43)
    a, p = np.asarray(asv), np.asarray(placebo)
    draws = (np.median(rng.choice(a, (resamples, a.size)), axis=1)
             / np.median(rng.choice(p, (resamples, p.size)), axis=1))
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(np.median(a) / np.median(p)), float(low), float(high)


def compare(rows: list[tuple[str, dict]]) -> None:
    for mode in MODES:
        group = [r for m, r in rows if m == mode]
        sides = {name: [r for r in group if (r["benchmark"] != "placebo") == is_asv]
                 for name, is_asv in (("asv", True), ("placebo", False))}
        for label, value in (("CPU a process", cpu),
                             ("counting phase", lambda r: r["measure"]["instructions"]["phases"].get("counting", 0.0))):
            ratio, low, high = ratio_interval([value(r) for r in sides["asv"]], [value(r) for r in sides["placebo"]])
            print(f"{mode:<7} {label:<15} asv / placebo {ratio:.3f} (95% interval {low:.3f}-{high:.3f}; "
                  f"{len(sides['asv'])} against {len(sides['placebo'])} processes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rows: list[tuple[str, dict]] = []
    with tempfile.TemporaryDirectory(prefix="colbench-asv-count-cost-") as tmp:
        suite = write_suite(Path(tmp))
        home = Path(tmp) / "home"
        for round_ in range(args.rounds):
            order = list(MODES) if round_ % 2 == 0 else list(MODES)[::-1]
            for mode in order:
                rows += [(mode, row) for row in one_run(home, suite, mode, args.processes)]
                print(f"round {round_ + 1}: {mode} done", file=sys.stderr)
    describe(rows)
    compare(rows)


if __name__ == "__main__":
    main()
