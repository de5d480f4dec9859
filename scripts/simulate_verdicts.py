"""Does the gate's decision procedure keep its promises? Seeded simulation of `run --until-decided`.

    uv run python scripts/simulate_verdicts.py [--trials 1000] [--budget 600] [--block-seconds 3.6]

Runs the real code path (analysis/sequential.py look planning and alpha spending, the verdict rule and
the rank tests of compare.py) on simulated noise (analysis/simulation.py: log-normal iterations with 5%
interrupted ones +30%, between-process spread, 2% odd processes +20%, block drift), one case per session
with a virtual clock: a block costs --block-seconds (two processes of a 230 ms case: start-up, a warm-up
and 5 iterations each). For each between-process CV it prints

- A/A: the false-alarm rate of the gate (regression verdicts) and of any claim (regression or
  improvement), with Wilson 95% intervals, how often "no change" was reached, the median blocks and
  minutes used, and the MDE (95% power) the undecided ones reached;
- a true +5%: the detection rate within the budget, the median blocks and minutes to the verdict;
- the same for the old rule (a regression only when the whole interval lies beyond the threshold),
  emulated with a noise floor just below the threshold;

and a family check: A/A suites of 9 cases (the gate) with a budget of 10 minutes per case, where any false
claim in the suite counts.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter

import numpy as np

from colbench.analysis.simulation import NoiseModel, SimulatedCase, simulate_until_decided
from colbench.analysis.stats import wilson_interval
from colbench.analysis.verdicts import Verdict, decide


def sessions(rng: np.random.Generator, model: NoiseModel, ratio: float, trials: int, args: argparse.Namespace,
             floor: float = 0.0) -> tuple[Counter[str], list[int], list[float], list[float]]:
    verdicts: Counter[str] = Counter()
    blocks, seconds, mdes = [], [], []
    for _ in range(trials):
        out = simulate_until_decided(rng, [SimulatedCase(model, ratio, args.block_seconds)], budget_s=args.budget,
                                     floor=floor, first_blocks=args.first_blocks)
        (c,) = out.comparisons
        verdicts[str(c.verdict)] += 1
        blocks.append(out.blocks[0])
        seconds.append(out.seconds)
        mdes.append(c.mde_95)
    return verdicts, blocks, seconds, mdes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per pair of cases")
    parser.add_argument("--block-seconds", type=float, default=3.6)
    parser.add_argument("--first-blocks", type=int, default=12)
    parser.add_argument("--cvs", default="0.025,0.045,0.08,0.16", help="between-process CVs to simulate")
    parser.add_argument("--suites", type=int, default=200, help="A/A suites of 9 cases for the family check")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.monotonic()

    measured = decide(math.log(1.051), math.log(1.027), math.log(1.074), threshold=0.03)
    print(f"the measured case 1.051 [1.027, 1.074] at threshold 3%: {measured}")
    print(f"budget {args.budget / 60:g} min per pair, {args.block_seconds:g} s per block, first look "
          f"{args.first_blocks} blocks, alpha 0.01, threshold 3%, {args.trials} trials per row\n")
    header = (f"{'between CV':>10} {'rule':<5} {'true':>5} {'false regressions':>19} {'any false claim':>19} "
              f"{'detected':>19} {'no change':>9} {'blocks':>6} {'minutes':>7} {'MDE95':>6}")
    print(header)
    for cv in (float(x) for x in args.cvs.split(",")):
        model = NoiseModel(between=cv, within=0.03)
        for rule, floor in (("new", 0.0), ("old", 0.0299)):
            for ratio in (1.0, 1.05):
                if rule == "old" and ratio == 1.0:
                    continue
                verdicts, blocks, seconds, mdes = sessions(rng, model, ratio, args.trials, args, floor)
                n = sum(verdicts.values())
                claims = verdicts[str(Verdict.REGRESSION)] + verdicts[str(Verdict.IMPROVEMENT)]
                hits = verdicts[str(Verdict.REGRESSION)]
                false_regressions = any_claim = detected = "-"
                if ratio == 1.0:
                    lo, hi = wilson_interval(hits, n)
                    false_regressions = f"{hits / n:.2%} [{lo:.2%}, {hi:.2%}]"
                    lo, hi = wilson_interval(claims, n)
                    any_claim = f"{claims / n:.2%} [{lo:.2%}, {hi:.2%}]"
                else:
                    lo, hi = wilson_interval(hits, n)
                    detected = f"{hits / n:.1%} [{lo:.1%}, {hi:.1%}]"
                no_change = verdicts[str(Verdict.NO_CHANGE)] / n
                print(f"{cv:>10.1%} {rule:<5} {ratio - 1:>+5.0%} {false_regressions:>19} {any_claim:>19} "
                      f"{detected:>19} {no_change:>9.1%} {np.median(blocks):>6.0f} {np.median(seconds) / 60:>7.1f} "
                      f"{np.median([m for m in mdes if math.isfinite(m)] or [math.inf]):>6.1%}", flush=True)

    model = NoiseModel(between=0.045, within=0.03)
    wrong = failed = 0
    for _ in range(args.suites):
        out = simulate_until_decided(rng, [SimulatedCase(model, 1.0, args.block_seconds)] * 9,
                                     budget_s=9 * args.budget, first_blocks=args.first_blocks)
        wrong += any(c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for c in out.comparisons)
        failed += any(c.verdict == Verdict.REGRESSION for c in out.comparisons)
    lo, hi = wilson_interval(failed, args.suites)
    print(f"\nfamily: A/A suites of 9 cases (between CV 4.5%, {9 * args.budget / 60:g} min budget): "
          f"{failed} of {args.suites} failed the gate ({failed / args.suites:.2%} [{lo:.2%}, {hi:.2%}]), "
          f"{wrong} had any false claim")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
