""""No change" for a case never counted here: the spreads of the other cases counted on this machine (issue #46).

A case's own calibration (`t_tests.py`: earlier runs lending CALIBRATED_DF degrees of freedom or more) lets "no
change" be decided at 2-3 processes a side. A case never counted on a machine has none, and two processes a side
give its spread on 2 degrees of freedom: the t-interval is then +/-10-25 times that spread wide, so the equivalence
test needed 8 processes a side. But counts have a known, measured spread on a machine: every case counted here left
its between-process spread in the store. They differ by 20x and more between cases (0.001% for a small pure-Python
call, 0.04-0.09% for a 10k-row read, 0.2-0.5% for a zstd Parquet read or an allocating placebo), so no single
figure of them (the mean, the median) may stand for a new case's spread: the quiet cases' would judge a noisy one.

What this module does instead is empirical Bayes over the machine's own cases:

- **The prior**: the new case's spread is one of the spreads the machine's counted cases show, each taken at its
  upper 90% confidence bound (`UPPER`: sigma * sqrt(df / chi2_0.10(df))), so a case measured on few degrees of
  freedom counts with the spread it may have, not the one it happened to show. Every case weighs the same.
- **The data decide between them**: these processes' own sum of squares (and the case's earlier runs', when they lend
  fewer than CALIBRATED_DF degrees of freedom) weight each candidate spread by its likelihood (the chi-square
  density of the observed spread under it). Two processes a side that agree to 0.001% make a 0.5% spread about
  10^-6 as likely as a 0.04% one; that is what lets 2-4 processes a side rule the noisy candidates out.
- **The interval**: the shift's (1 - a) half-width h solves sum_i w_i * 2 * (1 - Phi(h / (s_i * scale))) = a, a
  normal scale mixture over the candidates' spreads s_i, each floored at these processes' own pooled spread; never
  narrower than the t-interval these processes give on their own (their spread and degrees of freedom, without the
  floor: what this comparison's own data allow), and never wider than the interval of the metric's fixed floor.
- **The guard** (`t_tests.GUARD_LEVEL`, as for a case's own calibration): when these processes vary beyond the
  F(1 - GUARD_LEVEL) quantile of the noisiest case the machine knows, the machine's spreads are set aside: the case
  is noisier than anything counted here and is judged on its own spread and the floor.

It serves only the equivalence test ("no change"). Regressions and improvements keep the metric's fixed floor and
this comparison's own spread, so the A/A false-alarm rate and a change's detection are what they were; the price
of a wrong prior is a change near the threshold called "no change", which `scripts/counts_no_change.py --home`
measures on the machine's real per-process counts (docs/metrics.md).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from colbench.analysis.scipy_stats import stats as sps

#: each case's spread enters at this upper confidence bound of it
UPPER = 0.90
#: the fewest other cases the machine must have counted (each with MIN_CASE_DF degrees of freedom or more)
MIN_CASES = 3
MIN_CASE_DF = 2


@functools.cache
def upper_bound(variance: float, df: int) -> float:
    """The upper UPPER confidence bound of a spread measured as `variance` on `df` degrees of freedom (cached: a
    suite's every case asks it of every other case)."""
    return math.sqrt(variance * df / float(sps.chi2.ppf(1 - UPPER, df)))


@dataclass(frozen=True)
class MachineSpread:
    """The between-process spreads (log scale, at their upper UPPER bound) of the cases counted on this machine, with
    the degrees of freedom each was measured on."""

    sigmas: tuple[float, ...]
    dfs: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.sigmas) != len(self.dfs) or not all(s > 0 and math.isfinite(s) for s in self.sigmas):
            raise ValueError(f"a machine's spreads need one positive finite spread per df, got {self}")

    @classmethod
    def of(cls, spreads: Iterable[tuple[float, int]]) -> MachineSpread | None:
        """From (variance, df) of each counted case: those with MIN_CASE_DF or more and a spread above zero; None
        with fewer than MIN_CASES of them."""
        kept = [(v, df) for v, df in spreads if df >= MIN_CASE_DF and v > 0 and math.isfinite(v)]
        if len(kept) < MIN_CASES:
            return None
        return cls(tuple(upper_bound(v, df) for v, df in kept), tuple(df for _, df in kept))

    def range_text(self) -> str:
        return f"{min(self.sigmas):.3%}-{max(self.sigmas):.3%}"

    def set_aside(self, observed_variance: float, df: int, level: float) -> bool:
        """The guard: these processes vary beyond the F(1 - level) quantile of the noisiest case counted here."""
        if df <= 0 or observed_variance <= 0:
            return False
        noisiest = int(np.argmax(self.sigmas))
        ratio = observed_variance / self.sigmas[noisiest] ** 2
        return ratio > float(sps.f.isf(level, df, self.dfs[noisiest]))

    def equivalence(self, squares: float, df: int, pooled: float, scale: float) -> MachineEquivalence:
        """The candidates weighted by the likelihood of `squares` on `df` degrees of freedom, each floored at
        `pooled` (these processes' own spread): what the interval of "no change" is computed from."""
        sigmas = np.asarray(self.sigmas)
        # log chi-square density of squares / sigma^2 on df, up to what all candidates share
        log_like = -df * np.log(sigmas) - squares / (2 * sigmas ** 2)
        weights = np.exp(log_like - log_like.max())
        weights /= weights.sum()
        floored = np.maximum(sigmas, pooled)
        keep = weights > 1e-12
        return MachineEquivalence(tuple(float(s) for s in floored[keep] * scale),
                                  tuple(float(w) for w in weights[keep]), len(self.sigmas))


@dataclass(frozen=True)
class MachineEquivalence:
    """A normal scale mixture for the shift's error: standard errors and their weights (summing to 1)."""

    ses: tuple[float, ...]
    weights: tuple[float, ...]
    cases: int

    def half_width(self, a: float) -> float:
        """h with P(|error| > h) = a under the mixture."""
        ses, weights = np.asarray(self.ses), np.asarray(self.weights)

        def excess(h: float) -> float:
            return float((weights * 2 * sps.norm.sf(h / ses)).sum()) - a

        high = float(sps.norm.isf(a / 2) * ses.max())  # the widest candidate alone reaches a there
        if high <= 0:
            return 0.0
        from scipy import optimize  # at a statistic's first use, as scipy.stats (analysis/scipy_stats.py)

        return float(optimize.brentq(excess, 0.0, high * 1.000001, xtol=1e-12))

    @property
    def typical_se(self) -> float:
        """The weighted mean standard error (for the verdict's reason)."""
        return float(np.dot(self.ses, self.weights))
