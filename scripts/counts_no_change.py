"""How many counting processes a side does "no change" take, and is it still honest? (issue #46, point 3)

    uv run python scripts/counts_no_change.py [--trials 2000] [--home DIR --run RUN ...] [--machine-home DIR ...]

It replays the deciding step of `run --until-decided` (and of a watch pass, which uses it) on counts drawn from a
noise model, with colbench's own code: the first look at 2 processes a side charged FIRST_LOOK_FRACTION of the
budget, later looks of 1, 2, 3, ... more processes planned by `plan_next_look`, alpha spent by the share of the
budget used (`SequentialCompare`), each look judged by `compare_suite` with the noise earlier runs lend (`NoisePrior`,
what `colbench calibrate` or earlier runs of the case leave in the store). Per scenario it prints the A/A false-alarm
rate (a regression or an improvement), the share decided "no change" and the processes a side that took (median,
90th percentile), the share of a planted +2.5% step decided a regression at the first look (2 a side), and how
often a true +0.5% change (twice the threshold) was called "no change" (the equivalence test's error).

Noise models: normal per-process noise at a given spread; counts that land on one of two totals 0.3% apart (what
the fixed floor was for); processes that vary k times more than the case's calibration says (what the guard is
for); and, with `--home`/`--run`, the real per-process counts of stored A/A runs (each a case in two identical
environments), resampled with replacement, with the prior the run itself lends (its within-environment spread).

`--machine-home DIR` (several): every counting run stored in those homes on this machine, each case of each run a
scenario of a case *never counted here*, judged twice: on the fixed floor alone (as before), and on the spreads of
the other cases counted in those homes (`analysis/machine_noise.py`: leave-one-out, the case's own runs excluded).
A further column counts a true +0.3% change (just beyond the 0.25% threshold) called "no change".

It uses only APIs that predate the change it measures, so the "before" figures come from the same script run on the
code before it: `PYTHONPATH=/path/to/old/checkout/src python scripts/counts_no_change.py ...`.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from colbench.analysis.sequential import FIRST_LOOK_FRACTION, SequentialCompare, plan_next_look
from colbench.analysis.t_tests import NoisePrior
from colbench.analysis.verdicts import CaseInput, Verdict

Draw = Callable[[np.random.Generator, int], np.ndarray]
STEP = 1.025
#: a true change twice the threshold: calling it "no change" is the equivalence test's error
HIDDEN = 1.005
#: a true change just beyond the threshold: the equivalence test's error where it is largest
EDGE = 1.003


@dataclass(frozen=True)
class Scenario:
    name: str
    draw: Draw  # n per-process counts of one side
    prior: NoisePrior | None
    #: the machine's spreads (analysis/machine_noise.py `MachineSpread`; None: the code before it, or none)
    machine: object | None = None
    #: scenarios of one pair share their random draws (the same seed): a paired before/after
    pair: int | None = None


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    processes: int


def decide(rng: np.random.Generator, draw: Draw, prior: NoisePrior | None, *, ratio: float = 1.0,
           budget_blocks: float = 8.0, first_look: int = 2, only_first: bool = False,
           least_share: float = 0.0, machine: object | None = None) -> Outcome:
    """One comparison, look by look, as `run_until_decided` makes it (a block costs 1 s of a virtual clock)."""
    base = list(draw(rng, first_look))
    cont = list(draw(rng, first_look) * ratio)
    seq: SequentialCompare[str] = SequentialCompare(alpha=0.01, max_looks=None, paired=True)

    extra = {"machine": machine} if machine is not None else {}  # the code before machine_noise.py has no field

    def case() -> dict[str, CaseInput]:
        return {"c": CaseInput([[v] for v in base], [[v] for v in cont], metric="instructions",
                               baseline_blocks=list(range(len(base))), contender_blocks=list(range(len(cont))),
                               prior=prior, **extra)}

    result = seq.look(case(), fraction=FIRST_LOOK_FRACTION)["c"]
    elapsed = float(first_look)
    while seq.pending and not seq.exhausted and not only_first:
        plan = plan_next_look(elapsed_s=elapsed, budget_s=budget_blocks, seconds_per_block=1.0,
                              blocks_so_far=len(base), growth=0.5, min_step=1)
        if plan is None:
            break
        base += list(draw(rng, plan.blocks))
        cont += list(draw(rng, plan.blocks) * ratio)
        elapsed += plan.seconds
        # runner/session.py `look_fraction` (written out: the code before #46 has no least_share)
        spent = seq.fraction
        result = seq.look(case(), fraction=min(1.0, max(plan.fraction, spent, spent + least_share * (1 - spent))))["c"]
    return Outcome(result.verdict, len(base))


def normal(sigma: float, level: float = 6.448e6) -> Draw:
    return lambda rng, n: level * np.exp(rng.normal(0.0, sigma, n))


def two_point(gap: float = 0.003, level: float = 263e6) -> Draw:
    return lambda rng, n: level * np.where(rng.random(n) < 0.5, 1.0 + gap, 1.0)


def resampled(values: np.ndarray) -> Draw:
    return lambda rng, n: rng.choice(values, size=n, replace=True)


def prior_of(sigma: float, df: int = 10, runs: int = 2) -> NoisePrior:
    return NoisePrior(sigma ** 2, df, runs)


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    z, p = 1.96, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def run_scenario(scenario: Scenario, trials: int, budget_blocks: float, seed: int, least_share: float) -> str:
    machine = scenario.machine

    def rng(kind: int, trial: int) -> np.random.Generator:
        # a generator per trial: two scenarios of one pair draw the same processes trial by trial
        return np.random.default_rng([seed, kind, trial])

    aa = [decide(rng(0, i), scenario.draw, scenario.prior, budget_blocks=budget_blocks, least_share=least_share,
                 machine=machine) for i in range(trials)]
    false = sum(o.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for o in aa)
    same = [float(o.processes) for o in aa if o.verdict == Verdict.NO_CHANGE]
    step = [decide(rng(1, i), scenario.draw, scenario.prior, ratio=STEP, only_first=True, machine=machine)
            for i in range(trials)]
    caught = sum(o.verdict == Verdict.REGRESSION for o in step)
    hidden = sum(decide(rng(2, i), scenario.draw, scenario.prior, ratio=HIDDEN, budget_blocks=budget_blocks,
                        least_share=least_share, machine=machine).verdict == Verdict.NO_CHANGE
                 for i in range(trials))
    edge = sum(decide(rng(3, i), scenario.draw, scenario.prior, ratio=EDGE, budget_blocks=budget_blocks,
                      least_share=least_share, machine=machine).verdict == Verdict.NO_CHANGE for i in range(trials))
    lo, hi = wilson(false, trials)
    spread = (f"median {np.median(same):.0f}, 90% {np.percentile(same, 90):.0f}" if same else "-")
    within4 = sum(p <= 4 for p in same)
    return (f"| {scenario.name} | {false}/{trials} ({100 * false / trials:.2f}%, [{100 * lo:.2f}, {100 * hi:.2f}]) "
            f"| {100 * len(same) / trials:.1f}% | {100 * within4 / trials:.1f}% | {spread} "
            f"| {100 * caught / trials:.1f}% | {hidden}/{trials} | {edge}/{trials} |")


def stored_scenarios(home: str, runs: list[str]) -> list[Scenario]:
    """One scenario per case and run: its per-process counts (both environments of the A/A run: one pool), and the
    prior the run lends (within-environment spread, df = processes - 2)."""
    os.environ["COLBENCH_HOME"] = home
    from colbench.analysis.comparison import short_labels
    from colbench.app.stores import store_at
    from colbench.store.base import ResultQuery

    store = store_at(None)
    out = []
    for run_id in runs:
        results = [r for r in store.results(ResultQuery(run_ids=(run_id,))) if r.ok]
        labels = short_labels(results)
        name = store.get_run(run_id).config.run_name or run_id
        for case_id in sorted({r.case_id for r in results}):
            groups = []
            for env in sorted({r.env_name for r in results}):
                values = [float(np.median(s)) for r in results if r.case_id == case_id and r.env_name == env
                          and (s := r.samples.get("instructions"))]
                groups.append(np.asarray(values))
            pooled = np.concatenate(groups)
            squares = sum(float(((np.log(g) - np.log(g).mean()) ** 2).sum()) for g in groups)
            df = sum(g.size - 1 for g in groups)
            prior = NoisePrior(squares / df, df, len(groups)) if df > 0 else None
            sd = math.sqrt(squares / df) if df > 0 else math.nan
            label = f"{name}: {labels[case_id]} (real, {pooled.size} processes, spread {sd:.3%})"
            out.append(Scenario(label, resampled(pooled), prior))
    return out


def _stored_groups(homes: list[str]) -> dict[tuple[str, str, str], list[float]]:
    """(case id, home/run, its label) -> per-process instruction counts of each counting run's environments, one group
    per run and environment (A/A runs: both environments the same code)."""
    from colbench.analysis.comparison import short_labels
    from colbench.app.stores import store_at
    from colbench.store.base import ResultQuery

    groups: dict[tuple[str, str, str], list[float]] = {}
    for home in homes:
        results = [r for r in store_at(str(Path(home) / "results.duckdb"), create=False).results(ResultQuery())
                   if r.ok and r.samples.get("instructions")]
        labels = short_labels(results)
        for r in results:
            key = (r.case_id, f"{Path(home).name}/{r.run_id[-6:]}/{r.env_name}", labels[r.case_id])
            groups.setdefault(key, []).append(float(np.median(r.samples["instructions"])))
    return groups


def machine_scenarios(homes: list[str]) -> list[Scenario]:
    """Each case of each stored run and environment (a resampled pool must be one level: environments apart), never
    counted here: on the fixed floor, then on the spreads of the other cases in those homes."""
    from colbench.analysis.machine_noise import MachineSpread

    groups = _stored_groups(homes)
    by_case: dict[str, tuple[float, int]] = {}  # every case's pooled within-group (variance, df): what the store lends
    for (case_id, _, _), values in groups.items():
        logs = np.log(values)
        squares, df = by_case.get(case_id, (0.0, 0))
        by_case[case_id] = (squares + float(((logs - logs.mean()) ** 2).sum()), df + logs.size - 1)
    out = []
    for (case_id, where, label), values in sorted(groups.items(), key=lambda item: item[0][1]):
        if len(values) < 4:
            continue
        machine = MachineSpread.of((sq / df, df) for other, (sq, df) in by_case.items() if other != case_id and df)
        logs = np.log(values)
        name = f"{label} ({where}: {len(values)} real processes, spread {float(np.std(logs, ddof=1)):.3%})"
        pool = np.asarray(values)
        pair = 1000 + len(out)
        out.append(Scenario(f"{name}, never counted: fixed floor", resampled(pool), None, None, pair))
        if machine is not None:
            out.append(Scenario(f"{name}, never counted: the machine's {len(machine.sigmas)} other cases "
                                f"({machine.range_text()})", resampled(pool), None, machine, pair))
    return out


def model_scenarios() -> list[Scenario]:
    return [
        Scenario("normal 0.02%, no earlier runs", normal(0.0002), None),
        Scenario("normal 0.05%, no earlier runs", normal(0.0005), None),
        Scenario("normal 0.02%, calibrated 10 df", normal(0.0002), prior_of(0.0002)),
        Scenario("normal 0.05%, calibrated 10 df", normal(0.0005), prior_of(0.0005)),
        Scenario("normal 0.09%, calibrated 10 df", normal(0.0009), prior_of(0.0009)),
        Scenario("normal 0.05%, calibrated 30 df", normal(0.0005), prior_of(0.0005, 30, 6)),
        Scenario("two totals 0.3% apart, no earlier runs", two_point(), None),
        Scenario("two totals 0.3% apart, calibrated 10 df", two_point(), prior_of(0.0015 * math.sqrt(12 / 11))),
        Scenario("normal 0.10%, calibrated at 0.05% (2x)", normal(0.0010), prior_of(0.0005)),
        Scenario("normal 0.15%, calibrated at 0.05% (3x)", normal(0.0015), prior_of(0.0005)),
        Scenario("normal 0.25%, calibrated at 0.05% (5x)", normal(0.0025), prior_of(0.0005)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--budget-blocks", type=float, default=8.0,
                        help="the comparison's budget in blocks (8: `run --until-decided`'s default for counts; a "
                             "watch pass before #46 gave a release the pass's hour: 120 blocks of 30 s)")
    parser.add_argument("--home", help="a COLBENCH_HOME with stored A/A runs of counts")
    parser.add_argument("--run", action="append", default=[], help="an A/A run (two identical environments)")
    parser.add_argument("--no-models", action="store_true")
    parser.add_argument("--machine-home", action="append", default=[],
                        help="a COLBENCH_HOME whose counting runs are this machine's cases (leave-one-out)")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--least-share", type=float, default=0.0,
                        help="each later look spends at least this share of the alpha left (a watch: 0.1)")
    parser.add_argument("--guard", type=float, help="try another GUARD_LEVEL (analysis/t_tests.py)")
    args = parser.parse_args()
    import colbench
    from colbench.analysis import t_tests

    if args.guard is not None:
        t_tests.GUARD_LEVEL = args.guard

    print(f"colbench from {os.path.dirname(colbench.__file__)}; {args.trials} trials a scenario, budget "
          f"{args.budget_blocks:g} blocks, least share {args.least_share:g}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| scenario | A/A false alarms | A/A no change | no change at <= 4 a side | processes a side to no change "
          "| +2.5% a regression at 2 a side | +0.5% called no change | +0.3% called no change |")
    print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |")
    scenarios = [] if args.no_models else model_scenarios()
    if args.home:
        scenarios += stored_scenarios(args.home, args.run)
    if args.machine_home:
        scenarios += machine_scenarios(args.machine_home)
    for index, scenario in enumerate(scenarios):
        seed = args.seed + (index if scenario.pair is None else scenario.pair)
        print(run_scenario(scenario, args.trials, args.budget_blocks, seed, args.least_share), flush=True)


if __name__ == "__main__":
    main()
