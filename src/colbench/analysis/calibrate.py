"""A/A calibration: how noisy is each case, does `compare` keep its promise here, and how many processes
would a noisy case need?

In an A/A run both sides are the same code on the same machine, so every regression or improvement
verdict is a false positive. Two rates are reported:

- `false_positive_rate`: the share of cases that got a regression/improvement verdict at the chosen
  settings (threshold, alpha, multiplicity method): what a maintainer would see;
- `unadjusted_rejection_rate`: the share with a raw p <= alpha (no threshold, no multiplicity). It
  estimates the size of the per-case test; well above alpha means the samples are not exchangeable
  (drift between the halves, order effects, a bad pairing) and the verdicts cannot be trusted.

Processes needed (per side, or blocks when paired) to resolve the threshold, for a case whose
between-process spread on the log scale is sigma (robust, MAD-based)::

    unpaired:  n = ceil( 2 * (pi/3) * sigma^2 * (z_{1-a/2} + z_{1-beta})^2 / delta^2 )
    paired:    n = ceil(     (pi/3) * sigma_d^2 * (z_{1-a/2} + z_{1-beta})^2 / delta^2 )

with delta = ln(1 + threshold), a = alpha / m (the interval level `compare_suite` uses for m cases),
beta = 1 - power (default power 0.8) and sigma_d the spread of the per-block log-ratios. pi/3 is the
variance inflation of the Hodges–Lehmann estimator relative to the mean under normal noise (asymptotic
efficiency 3/pi). With that n a case with no change is called "no change" (interval inside the band),
and one that changed by 2*threshold is called a regression, each with probability about `power`. The
result is never below the smallest n at which the exact rank test can reach level a at all.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from colbench.analysis.compare import CaseInput, Method, Samples, Verdict, block_log_ratios, compare_suite
from colbench.analysis.rank_tests import pairs_needed, processes_needed
from colbench.analysis.stats import process_locations, robust_sigma, within_process_cv


@dataclass(frozen=True)
class CalibrationCase:
    """Noise and A/A outcome of one case.

    `cv_iterations`: median over processes of the iteration-level CV; `cv_processes`: CV of the
    per-process medians (what inference sees); `sigma_log`: the robust spread used for the sample size
    (per-process log location, or per-block log-ratio when paired). `needed` is processes per side
    (unpaired) or blocks (paired); `noisy` when the case had fewer than that.
    """

    key: Hashable
    metric: str
    paired: bool
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
    needed: int
    noisy: bool


@dataclass(frozen=True)
class CalibrationReport:
    cases: list[CalibrationCase]
    threshold: float
    alpha: float
    method: str
    power: float
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


def sample_size(sigma_log: float, *, threshold: float, level: float, power: float = 0.8, paired: bool = False) -> int:
    """Processes per side (unpaired) or blocks (paired) to resolve `threshold` at interval level `level`.

    See the module docstring for the formula. NaN sigma (fewer than 2 values) gives the exact-test
    minimum.
    """
    floor = pairs_needed(level) if paired else processes_needed(level)
    floor = max(floor, 2)
    if not math.isfinite(sigma_log):
        return floor
    delta = math.log1p(threshold)
    z = float(sps.norm.isf(level / 2)) + float(sps.norm.isf(1 - power))
    factor = 1.0 if paired else 2.0
    n = math.ceil(factor * (math.pi / 3) * sigma_log**2 * z**2 / delta**2)
    return max(n, floor)


def calibrate_suite(
    cases: Mapping[Hashable, CaseInput | Samples],
    *,
    threshold: float = 0.03,
    alpha: float = 0.01,
    method: Method = "holm",
    paired: bool | None = None,
    power: float = 0.8,
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
        locs_b = process_locations(case.baseline)
        locs_c = process_locations(case.contender)
        if comp.paired:
            sigma = robust_sigma(block_log_ratios(case))
            n = comp.n_blocks
        else:
            centred = [np.log(locs) - np.median(np.log(locs)) for locs in (locs_b, locs_c) if locs.size]
            sigma = robust_sigma(np.concatenate(centred)) if centred else math.nan
            n = min(comp.n_baseline, comp.n_contender)
        pooled = np.concatenate([locs_b, locs_c])
        cv_proc = float(pooled.std(ddof=1) / pooled.mean()) if pooled.size > 1 else math.nan
        needed = sample_size(sigma, threshold=threshold, level=level, power=power, paired=comp.paired)
        out.append(
            CalibrationCase(
                key=comp.key,
                metric=comp.metric,
                paired=comp.paired,
                n=n,
                cv_iterations=within_process_cv([*case.baseline, *case.contender]),
                cv_processes=cv_proc,
                sigma_log=sigma,
                verdict=comp.verdict,
                ratio=comp.ratio,
                ci_low=comp.ci_low,
                ci_high=comp.ci_high,
                p_value=comp.p_value,
                false_positive=comp.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT),
                needed=needed,
                noisy=n < needed,
            )
        )
    total = max(len(out), 1)
    return CalibrationReport(
        cases=out,
        threshold=threshold,
        alpha=alpha,
        method=method,
        power=power,
        false_positive_rate=sum(c.false_positive for c in out) / total,
        unadjusted_rejection_rate=sum(c.p_value <= alpha for c in out) / total,
        no_change_rate=sum(c.verdict == Verdict.NO_CHANGE for c in out) / total,
        inconclusive_rate=sum(c.verdict == Verdict.INCONCLUSIVE for c in out) / total,
    )
