"""Verdicts as fast as the evidence: how often a comparison of 2-8 processes a side catches a change, and how often it
cries wolf, on real processes of this machine and on resamples of them.

    uv run python scripts/verdict_power.py collect --home DIR --case parquet-read --blocks 100
    uv run python scripts/verdict_power.py collect --home DIR --case parquet-read --blocks 40 --slowdown 1.3
    uv run python scripts/verdict_power.py collect --home DIR --case parquet-100k --blocks 50        # counts
    uv run python scripts/verdict_power.py collect --home DIR --case parquet-100k --blocks 12 --more 2%
    uv run python scripts/verdict_power.py real --home DIR [--prior]
    uv run python scripts/verdict_power.py simulate --home DIR [--trials 2000]

`collect` runs one real interleaved run of a case with two environments, A and B, both this interpreter; B's
library function (e.g. `pyarrow.parquet.read_table`) is made slower from outside colbench by the `sitecustomize`
hook of scripts/detection_rate.py: by a wall-time factor (`--slowdown 1.3`: +30% of the call's own time), or, for
instruction counts, by a fixed amount of integer work sized to `--more 2%` of the call's instructions (measured first
in two counted processes). Without either it is an A/A run. Workers are pinned to `--cpu` (default 1, away from the
CPU 0 other work on the machine lands on first).

`real` cuts every stored run into disjoint groups of n consecutive blocks (n = 2 … 8) and compares each group with
colbench's one comparison (`analysis.comparison.compare_sides`, alpha 0.01, one case): every group is a real
comparison of n processes a side. A/A groups count false alarms, A/B groups detections. `--prior` lends each group
the spread of its run's other blocks, as earlier runs of a case do for metrics of stable noise.

`simulate` resamples the real A/A blocks: n distinct blocks, sides swapped at random in each, the contender scaled by
1 + effect, compared with the same code. It shows the false-alarm rate at each n under this machine's own noise shapes
(heavy tails included), the detection curve, and the same under a model of the VM's two CPU speeds (docs/gating.md):
each process runs in the slow state (1.5x) with probability 0.3, or switches half-way with probability 0.1.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from detection_rate import CASES as TIME_CASES  # noqa: E402
from detection_rate import SITECUSTOMIZE, colbench  # noqa: E402

from colbench.analysis.comparison import CompareSettings, compare_sides  # noqa: E402
from colbench.analysis.simulation import NoiseModel, blocks  # noqa: E402
from colbench.analysis.stats import wilson_interval  # noqa: E402
from colbench.analysis.t_tests import pooled_prior  # noqa: E402
from colbench.analysis.verdicts import CaseInput, Verdict, compare_suite  # noqa: E402
from colbench.model.metrics import metric  # noqa: E402
from colbench.model.records import Result, Run, Side  # noqa: E402

_PARQUET_100K = ["file-read", "--param", "format=parquet", "--param", "codec=snappy", "--param", "engine=pyarrow",
                 "--param", "source=fanniemae_2016Q4", "--param", "output=arrow_table", "--param", "rows=100000",
                 "--param", "threads=1"]
#: cases for instruction counts: small enough that a Valgrind process takes seconds, not minutes
COUNT_CASES: dict[str, tuple[list[str], str]] = {
    "parquet-100k": (_PARQUET_100K, "pyarrow.parquet:read_table"),
    "csv-20k-pyarrow": (["csv-read", "--param", "reader=pyarrow", "--param", "source=fanniemae_2016Q4",
                         "--param", "compression=none", "--param", "output=arrow_table", "--param", "rows=20000",
                         "--param", "threads=1"], "pyarrow.csv:read_csv"),
    "csv-20k-polars": (["csv-read", "--param", "reader=polars", "--param", "source=fanniemae_2016Q4",
                        "--param", "compression=none", "--param", "output=dataframe", "--param", "rows=20000",
                        "--param", "threads=1"], "polars:read_csv"),
}
SIZES = (2, 3, 4, 5, 6, 8)
NAME = re.compile(r"^vp\|(?P<case>[^|]+)\|(?P<metric>[^|]+)\|(?P<effect>[^|]+)$")


# ---------------------------------------------------------------------------------------------------- collect


def _hook(tmp: Path) -> Path:
    hook = tmp / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return hook


def _run(home: Path, args: list[str], *extra: str) -> None:
    started = time.monotonic()
    done = colbench(home, "run", *args, *extra)
    if done.returncode not in (0, 1):  # 1: the run's own comparison found a regression
        sys.exit(f"colbench run failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    print(f"  {time.monotonic() - started:.0f} s, load {os.getloadavg()[0]:.1f}", flush=True)


def _median_count(home: Path, run_name: str) -> float:
    from colbench.store import open_store
    from colbench.store.base import ResultQuery

    store = open_store(str(home / "results.duckdb"), create=False, read_only=True)
    try:
        run_id = next(r.run_id for r in store.find_runs(run_name) if r.name == run_name)
        values = [v for r in store.results(ResultQuery(run_ids=(run_id,))) for v in metric("instructions").values(r)
                  or []]
    finally:
        store.close()
    return float(np.median(values))


def collect(args: argparse.Namespace) -> None:
    counts = args.case in COUNT_CASES
    case_args, target = (COUNT_CASES if counts else TIME_CASES)[args.case]
    home = args.home.resolve()
    os.sched_setaffinity(0, {args.cpu})  # colbench pins each worker to the first CPU it is allowed
    with tempfile.TemporaryDirectory() as tmp:
        side = f"@current PYTHONPATH={_hook(Path(tmp))} COLBENCH_INJECT_TARGET={target}"
        common = ["--iterations", str(args.iterations), "--warmup", "1", "--seed", str(args.seed)]
        if counts:
            common += ["--measure", "instructions"]
        effect, contender = "aa", side
        if counts and args.more:
            # size the injected work in instructions: one plain counted process, one with a probe amount
            probe = 200_000
            stamp = f"{args.case}-{int(time.time())}"
            for name, units in ((f"size0-{stamp}", 0), (f"size1-{stamp}", probe)):
                print(f"sizing {args.more} for {args.case}: {name}", flush=True)
                _run(home, case_args, *common, "--processes", "1", "--run-name", name,
                     "--env", f"A={side} COLBENCH_INJECT_UNITS={units}")
            base, probed = _median_count(home, f"size0-{stamp}"), _median_count(home, f"size1-{stamp}")
            fraction = float(args.more.rstrip("%")) / 100
            units = round(fraction * base / ((probed - base) / probe))
            effect, contender = f"+{args.more.rstrip('%')}%", f"{side} COLBENCH_INJECT_UNITS={units}"
            print(f"  {base:,.0f} instructions per call; {units} units add {fraction:.2%}", flush=True)
        elif args.slowdown != 1.0:
            effect, contender = f"x{args.slowdown:g}", f"{side} COLBENCH_INJECT_FACTOR={args.slowdown}"
        name = f"vp|{args.case}|{'instructions' if counts else 'time'}|{effect}"
        print(f"{name}: {args.blocks} blocks", flush=True)
        _run(home, case_args, *common, "--processes", str(args.blocks), "--run-name", name,
             "--env", f"A={side}", "--env", f"B={contender}")


# ------------------------------------------------------------------------------------------------------- real


def _runs(home: Path) -> list[tuple[Run, list[Result]]]:
    from colbench.store import open_store
    from colbench.store.base import ResultQuery

    store = open_store(str(home / "results.duckdb"), create=False, read_only=True)
    try:
        found = []
        for run in store.list_runs():
            if NAME.match(run.name or ""):
                found.append((run, store.results(ResultQuery(run_ids=(run.run_id,)))))
        return found
    finally:
        store.close()


def _prior(results: list[Result], group: set[int], metric_name: str):
    """The spread of the run's other blocks, one group per environment (as earlier runs would lend it)."""
    series = metric(metric_name)
    by_env: dict[str, list[float]] = defaultdict(list)
    for r in results:
        values = series.values(r) if r.ok and r.block not in group else None
        if values:
            by_env[r.env_name].append(math.log(float(np.median(values))))
    return pooled_prior([np.asarray(v) for v in by_env.values()])


def real(args: argparse.Namespace) -> None:
    table: dict[tuple[str, str, str, int], Counter] = defaultdict(Counter)
    for run, results in _runs(args.home.resolve()):
        _count_verdicts(run, results, args.prior, table)
    print(f"real comparisons (disjoint groups of n blocks of each run; alpha 0.01, one case each"
          f"{'; spread of the other blocks lent' if args.prior else ''})")
    print(f"{'case':<16} {'metric':<12} {'effect':>6} {'n':>2} {'cmp':>4} {'regr':>5} {'impr':>5} {'same':>5} "
          f"{'inc':>5}  rate [Wilson 95%]")
    for (case, metric_name, effect, n), counts in sorted(table.items()):
        total = sum(counts.values())
        hits = counts["regression"] if effect != "aa" else counts["regression"] + counts["improvement"]
        low, high = wilson_interval(hits, total)
        what = "false alarms" if effect == "aa" else "detected"
        print(f"{case:<16} {metric_name:<12} {effect:>6} {n:>2} {total:>4} {counts['regression']:>5} "
              f"{counts['improvement']:>5} {counts['no change']:>5} {counts['inconclusive']:>5}  "
              f"{what} {hits / total:.1%} [{low:.1%}, {high:.1%}]")
    _print_false_alarms(table)


def _count_verdicts(run: Run, results: list[Result], prior: bool,
                    table: dict[tuple[str, str, str, int], Counter]) -> None:
    """The verdicts of one run's disjoint groups of n blocks (each size of SIZES), counted into `table`."""
    match = NAME.match(run.name or "")
    assert match
    case, metric_name, effect = match["case"], match["metric"], match["effect"]
    blocks_run = sorted({r.block for r in results if r.block is not None})
    for n in SIZES:
        for start in range(0, len(blocks_run) - n + 1, n):
            group = set(blocks_run[start:start + n])
            sides = [Side(env, run.run_id, env, [r for r in results if r.env_name == env and r.block in group])
                     for env in ("A", "B")]
            settings = CompareSettings(metrics=(metric_name,))
            try:
                if prior and metric(metric_name).stable_noise:
                    comparison = _with_prior(sides, results, group, settings)
                else:
                    comparison = compare_sides(*sides, settings)
            except ValueError:
                table[(case, metric_name, effect, n)]["no result"] += 1
                continue
            for c in comparison.cases:
                table[(case, metric_name, effect, n)][str(c.verdict)] += 1


def _print_false_alarms(table: dict[tuple[str, str, str, int], Counter]) -> None:
    totals = Counter()
    for (_, metric_name, effect, _), counts in table.items():
        if effect == "aa":
            totals[metric_name, "n"] += sum(counts.values())
            totals[metric_name, "wrong"] += counts["regression"] + counts["improvement"]
    for metric_name in sorted({m for m, _ in totals}):
        n, wrong = totals[metric_name, "n"], totals[metric_name, "wrong"]
        low, high = wilson_interval(wrong, n)
        print(f"A/A {metric_name}: {wrong} regressions or improvements in {n} real comparisons of 2-8 processes a "
              f"side ({wrong / max(n, 1):.2%}, Wilson 95% [{low:.2%}, {high:.2%}])")


def _with_prior(sides: list[Side], results: list[Result], group: set[int], settings: CompareSettings):
    from colbench.analysis.comparison import Comparison, case_inputs

    inputs, notes = case_inputs(*sides, settings.metrics[0])
    prior = _prior(results, group, settings.metrics[0])
    inputs = {k: dataclasses.replace(v, prior=prior) for k, v in inputs.items()}
    return Comparison("A", "B", compare_suite(inputs, alpha=settings.alpha), notes)


# --------------------------------------------------------------------------------------------------- simulate


def _pools(home: Path) -> dict[tuple[str, str], list[tuple[list[float], list[float]]]]:
    """(case, metric) → per block of every A/A run: the A process's and the B process's values."""
    pools: dict[tuple[str, str], list[tuple[list[float], list[float]]]] = defaultdict(list)
    for run, results in _runs(home):
        match = NAME.match(run.name or "")
        assert match
        if match["effect"] != "aa":
            continue
        series = metric(match["metric"])
        by_block: dict[int, dict[str, list[float]]] = defaultdict(dict)
        for r in results:
            values = series.values(r) if r.ok else None
            if values and r.block is not None:
                by_block[r.block][r.env_name] = values
        for sides in by_block.values():
            if len(sides) == 2:
                pools[(match["case"], match["metric"])].append((sides["A"], sides["B"]))
    return pools


def _verdict(base: list[list[float]], cont: list[list[float]], metric_name: str) -> Verdict:
    index = list(range(len(base)))
    case = CaseInput(base, cont, metric=metric_name, baseline_blocks=index, contender_blocks=index)
    (comparison,) = compare_suite({"c": case}, alpha=0.01)
    return comparison.verdict


def _two_speed(rng: np.random.Generator, n: int, effect: float) -> tuple[list[list[float]], list[list[float]]]:
    """n blocks of a 200 ms case on the two-speed VM: 3% between processes, 4% between iterations, and each process
    in the slow state (x1.5) with probability 0.3 or switching to it half-way with probability 0.1."""
    model = NoiseModel(between=0.03, within=0.04, outlier_rate=0.05, outlier_size=0.3, drift=0.02, base_s=0.2)
    base, cont, _ = blocks(rng, model, n, ratio=1 + effect, iterations=5)
    for side in (base, cont):
        for proc in side:
            state = rng.random()
            if state < 0.3:
                proc[:] = [v * 1.5 for v in proc]
            elif state < 0.4:
                proc[2:] = [v * 1.5 for v in proc[2:]]
    return base, cont


def simulate(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    pools = _pools(args.home.resolve())
    shapes: dict[tuple[str, str], object] = {key: pool for key, pool in pools.items() if len(pool) >= 2 * max(SIZES)}
    shapes[("two-speed model", "time")] = "model"
    print(f"resampled real A/A noise ({args.trials} trials per cell; alpha 0.01, one case; rates with Wilson 95%)")
    for (case, metric_name), pool in shapes.items():
        effects = (0.0, 0.005, 0.01, 0.02) if metric_name == "instructions" else (0.0, 0.05, 0.1, 0.2, 0.3)
        print(f"\n{case} ({metric_name}, {len(pool) if pool != 'model' else 'model'} blocks)")
        print(f"{'n':>2} " + " ".join(f"{('A/A false' if e == 0 else f'+{e:.1%}'):>22}" for e in effects))
        for n in SIZES:
            cells = []
            for effect in effects:
                hits = 0
                for _ in range(args.trials):
                    if pool == "model":
                        base, cont = _two_speed(rng, n, effect)
                    else:
                        picked = rng.choice(len(pool), n, replace=False)
                        base, cont = [], []
                        for i in picked:
                            a, b = pool[i] if rng.random() < 0.5 else pool[i][::-1]
                            base.append(list(a))
                            cont.append([v * (1 + effect) for v in b])
                    verdict = _verdict(base, cont, metric_name)
                    wrong = verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)
                    hits += wrong if effect == 0 else verdict == Verdict.REGRESSION
                low, high = wilson_interval(hits, args.trials)
                cells.append(f"{hits / args.trials:6.1%} [{low:5.1%},{high:6.1%}]")
            print(f"{n:>2} " + " ".join(f"{c:>22}" for c in cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--home", type=Path, required=True)
    c.add_argument("--case", required=True, choices=sorted({*TIME_CASES, *COUNT_CASES}))
    c.add_argument("--blocks", type=int, default=40)
    c.add_argument("--iterations", type=int, default=5)
    c.add_argument("--slowdown", type=float, default=1.0, help="wall-time factor of B's library call")
    c.add_argument("--more", help="instruction cases: extra work in B, e.g. 2%%")
    c.add_argument("--cpu", type=int, default=1)
    c.add_argument("--seed", type=int, default=42)
    r = sub.add_parser("real")
    r.add_argument("--home", type=Path, required=True)
    r.add_argument("--prior", action="store_true")
    s = sub.add_parser("simulate")
    s.add_argument("--home", type=Path, required=True)
    s.add_argument("--trials", type=int, default=1000)
    s.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    {"collect": collect, "real": real, "simulate": simulate}[args.command](args)


if __name__ == "__main__":
    main()
