"""A/A calibration: how noisy is each case here, does `compare` keep its promise, and what can a gate catch?

In an A/A run both sides are the same code on the same machine, so every regression or improvement
verdict is a false positive. Reported:

- `false_positive_rate`: the share of cases that got a regression/improvement verdict at the chosen
  settings (threshold, alpha, multiplicity method): what a maintainer would see;
- `unadjusted_rejection_rate`: the share with a raw p <= alpha (no threshold, no multiplicity). It
  estimates the size of the per-case test; well above alpha means the samples are not exchangeable
  (drift between the halves, order effects, a bad pairing) and the verdicts cannot be trusted;
- per case: the spread of iterations and of processes, the spread of the per-block log-ratios that the
  verdict works with (`sigma_log`, on the basis the verdict would use: wall or CPU time, see `basis.py`),
  the minimum detectable effect at this run's n (`mde_95`), and the blocks a gate needs to call a true
  slowdown of `effect` (default 5%) a regression with 95% probability (`needed`, see `power.py`); a case
  with fewer blocks than that is flagged `noisy`. With the seconds one block takes, `needed_s` is the
  time that costs.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from colbench.analysis.power import blocks_needed, fewest, paired_t_mde, pooled_t_mde
from colbench.analysis.rank_tests import pairs_needed
from colbench.analysis.stats import process_locations, within_process_cv
from colbench.analysis.verdicts import RANK_REACH, CaseComparison, CaseInput, Method, Samples, Verdict, compare_suite


@dataclass(frozen=True)
class CalibrationCase:
    """Noise and A/A outcome of one case.

    `cv_iterations`: median over processes of the iteration-level CV; `cv_processes`: CV of the
    per-process medians; `sigma_log`: robust spread of the per-block log-ratios (per-process log
    locations when unpaired); `basis`: wall or CPU time, as the verdict used. `n` is blocks (paired) or
    processes per side; `needed` the blocks to catch `effect` with 95% power (None: not within 100,000).
    """

    key: Hashable
    metric: str
    paired: bool
    basis: str
    n: int
    cv_iterations: float
    cv_processes: float
    sigma_log: float
    verdict: Verdict
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    false_positive: bool
    mde_95: float
    needed: int | None
    needed_s: float | None
    noisy: bool


@dataclass(frozen=True)
class CalibrationReport:
    cases: list[CalibrationCase]
    threshold: float
    alpha: float
    method: str
    effect: float
    false_positive_rate: float
    unadjusted_rejection_rate: float
    no_change_rate: float
    inconclusive_rate: float

    @property
    def noisy(self) -> list[Hashable]:
        return [c.key for c in self.cases if c.noisy]

    @property
    def any_false_positive(self) -> bool:
        return any(c.false_positive for c in self.cases)


def split_aa(processes: Samples) -> CaseInput:
    """Split one run's processes (in execution order) into two interleaved halves A/A'.

    Even positions become the baseline, odd ones the contender, and processes 2i and 2i+1 share block
    i, which mirrors how the runner interleaves two environments.
    """
    baseline = [list(p) for p in processes[0::2]]
    contender = [list(p) for p in processes[1::2]]
    return CaseInput(
        baseline=baseline,
        contender=contender,
        baseline_blocks=list(range(len(baseline))),
        contender_blocks=list(range(len(contender))),
    )


def needed(comp: CaseComparison, case: CaseInput, effect: float, level: float) -> int | None:
    """Blocks (or processes a side) with which the test that would decide catches a true slowdown of `effect` with
    95% power: the pooled t (instruction counts), or, for "auto", the paired t below the rank test's reach and the
    rank test beyond (analysis/verdicts.py). Spreads convert between a process's log value and a block's log-ratio
    as for independent processes (x sqrt(2)); the paired t's spread never goes below the metric's floor."""
    sigma_block = comp.sigma_log * math.sqrt(2) if comp.test == "t" else comp.sigma_log
    if not math.isfinite(sigma_block) or effect <= comp.threshold:
        return None
    test = case.resolved_test
    if test == "t":
        return fewest(lambda n: pooled_t_mde(sigma_block / math.sqrt(2), n, level=level, power=0.95,
                                             threshold=comp.threshold, prior_df=comp.prior_df), effect, 2)
    by_rank = blocks_needed(sigma_block, effect, level=level, power=0.95, threshold=comp.threshold)
    if test == "rank":
        return by_rank
    reach = math.ceil(RANK_REACH * pairs_needed(level))
    floored = max(sigma_block, case.noise_floor * math.sqrt(2))
    by_t = fewest(lambda n: paired_t_mde(floored, n, level=level, power=0.95, threshold=comp.threshold), effect, 2,
                  most=reach)
    if by_t is not None and by_t < reach:
        return by_t
    return None if by_rank is None else max(by_rank, reach)


def calibrate_suite(
    cases: Mapping[Hashable, CaseInput | Samples],
    *,
    threshold: float | None = None,
    alpha: float = 0.01,
    method: Method = "holm",
    paired: bool | None = None,
    effect: float = 0.05,
    seconds_per_block: Mapping[Hashable, float] | None = None,
) -> CalibrationReport:
    """Calibrate from A/A results: per case a `CaseInput` (two sides of the same code) or a single list
    of processes in execution order (split with `split_aa`)."""
    inputs = {k: (v if isinstance(v, CaseInput) else split_aa(v)) for k, v in cases.items()}
    comparisons = compare_suite(inputs, threshold=threshold, alpha=alpha, method=method, paired=paired)
    m = max(len(comparisons), 1)
    level = alpha / m if method != "none" else alpha
    out = []
    for comp in comparisons:
        case = inputs[comp.key]
        shown = case if comp.basis == case.basis or case.check is None else case.check
        locs_b, locs_c = process_locations(shown.baseline), process_locations(shown.contender)
        pooled = np.concatenate([locs_b, locs_c])
        cv_proc = float(pooled.std(ddof=1) / pooled.mean()) if pooled.size > 1 else math.nan
        n = comp.n_blocks if comp.paired else min(comp.n_baseline, comp.n_contender)
        # a case compared on CPU time is tested at half the level (wall time is the other half)
        case_level = level / 2 if case.check is not None else level
        blocks = needed(comp, case, effect, case_level)
        per_block = (seconds_per_block or {}).get(comp.key)
        out.append(
            CalibrationCase(
                key=comp.key,
                metric=comp.metric,
                paired=comp.paired,
                basis=comp.basis,
                n=n,
                cv_iterations=within_process_cv([*shown.baseline, *shown.contender]),
                cv_processes=cv_proc,
                sigma_log=comp.sigma_log,
                verdict=comp.verdict,
                ratio=comp.ratio,
                ci_low=comp.ci_low,
                ci_high=comp.ci_high,
                p_value=comp.p_value,
                false_positive=comp.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT),
                mde_95=comp.mde_95,
                needed=blocks,
                needed_s=blocks * per_block if blocks is not None and per_block else None,
                noisy=blocks is None or n < blocks,
            )
        )
    total = max(len(out), 1)
    return CalibrationReport(
        cases=out,
        threshold=comparisons[0].threshold if comparisons else (threshold or 0.0),
        alpha=alpha,
        method=method,
        effect=effect,
        false_positive_rate=sum(c.false_positive for c in out) / total,
        unadjusted_rejection_rate=sum(c.p_value <= alpha for c in out) / total,
        no_change_rate=sum(c.verdict == Verdict.NO_CHANGE for c in out) / total,
        inconclusive_rate=sum(c.verdict == Verdict.INCONCLUSIVE for c in out) / total,
    )
