"""t-intervals on log values: verdicts from a few processes when the noise allows them.

Why a second family beside the rank tests (`rank_tests.py`): an exact rank test's smallest p-value is fixed by
the count of samples, not by the noise (2/2^n over n blocks; 2/C(2n, n) over n processes a side), so 3 processes
a side can never reach p <= 0.01 even when instruction counts move by 4% and vary by 0.05%. The t-interval's
width follows the observed spread instead, so an obvious change is decided with 2-4 processes a side.

The model: each process's log value (the log of the median of its iterations) is the side's level plus noise
that is independent between processes, normal, and of one variance on both sides. Then

    t = (mean log contender - mean log baseline) / (s * sqrt(1/n1 + 1/n2))

follows Student's t with n1 + n2 - 2 degrees of freedom under "no change", where s^2 pools the two sides'
within-side variances. It is unpaired on purpose: at a few processes a side, pooling the two sides gives twice the
degrees of freedom of a paired test over the same blocks (a paired t over 4 blocks has 3, this one 6), and the
drift that pairing removes is small over the seconds a few blocks take.

Two additions, each documented where it is decided (docs/gating.md):
- **a noise floor** (`floor`, from the metric's definition): s is never taken below it. Two sides that happen to
  repeat one value each (two processes of identical instruction counts) would otherwise give s = 0, t = inf and a
  "significant" change of any size. A metric that is exactly deterministic (a file's size) has floor 0, and two
  constant sides then give the point itself.
- **noise from history** (`prior`): for a metric whose noise does not depend on the machine's load (instruction
  counts), earlier runs of the same case on this machine estimate the same variance. Their within-environment sums
  of squares and degrees of freedom are added to the pooled ones: it is the within-group variance of an analysis
  of variance in which each earlier run is one more group, so the statistic stays t-distributed, with more
  degrees of freedom and a narrower interval.
- **"no change" on the case's calibrated spread** (`equivalence_interval`): once earlier runs of the case (its
  `colbench calibrate` A/A run, earlier watch passes, any counted run) lend CALIBRATED_DF degrees of freedom or
  more, their spread is this case's measured spread on this machine. The equivalence test ("no change": the whole
  interval within the threshold's band) then takes s never below that calibrated spread, in place of the metric's
  fixed floor (0.1% for counts): a case whose counts vary by 0.02-0.05% is decided "no change" at 2-3 processes a
  side, where the fixed floor needed 5-8 (and the looks of a long budget more: docs/metrics.md). Regressions and
  improvements keep the fixed floor: it is what holds false alarms at alpha when a few processes cannot show the
  noise (a zero spread, counts that land on one of two totals), so the A/A false-alarm rate and a change's
  detection are what they were. The two verdicts cannot both hold: a regression needs an estimate beyond the
  threshold, "no change" an interval inside it.
- **a case never counted here** (`machine_noise.py`): without a calibration of its own, "no change" is judged on the
  spreads of the other cases counted on this machine (empirical Bayes over their upper bounds, weighed by these
  processes' likelihood), with the same guard; regressions and improvements again keep the floor.
- **the guard**: the prior is one variance for the case; a release whose processes vary far more than the case's
  history did (a new code path, a two-valued count history never showed) must not be judged on the history's
  spread. When the observed variance is beyond the (1 - GUARD_LEVEL) quantile of F(observed df, prior df) times the
  prior's, the prior is set aside: the processes are judged on their own spread with the metric's floor, and the
  verdict says so (`TShift.prior_set_aside`).

A paired variant (`paired_t`) serves metrics whose noise depends on the machine's state (wall time): the mean of the
per-block log-ratios over its standard error, n - 1 degrees of freedom. Pairing cancels what a block's two processes
share (the CPU's speed state while they ran back to back, drift), and the floor (per process, so sqrt(2) of it per
block) keeps a few blocks that happen to agree from passing for a quiet machine: on a VM whose CPU switches between
two speeds, a block's log-ratio is a mixture of ~0 and +/-ln 1.5, where a t over 3-9 blocks without a floor would
cry wolf (docs/gating.md has the simulation).

What happens when the model does not hold is measured, not assumed: `scripts/verdict_power.py` resamples real A/A
processes of this VM (heavy tails included) and simulates its two CPU speeds, and counts false regressions at every
size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from colbench.analysis.machine_noise import MachineEquivalence, MachineSpread
from colbench.analysis.scipy_stats import stats as sps

#: the fewest degrees of freedom earlier runs must lend before their spread takes the place of the metric's floor:
#: a `colbench calibrate --processes 6` run gives 10 (two sides of 6), a first watch pass 2-20
CALIBRATED_DF = 10
#: the guard's level: a prior is set aside when the observed variance exceeds it by more than F(1 - GUARD_LEVEL)
GUARD_LEVEL = 0.01

@dataclass(frozen=True)
class NoisePrior:
    """What earlier runs say about a case's between-process noise: the pooled variance of per-process log values
    within one environment, its degrees of freedom, and how many runs it came from."""

    variance: float
    df: int
    runs: int
    #: whether its spread may take the place of the metric's fixed floor (with CALIBRATED_DF degrees of freedom or
    #: more); False when a run recorded before colbench did that is replayed, so its looks reach what they reached
    calibrates: bool = True

    @property
    def calibrated(self) -> bool:
        """Whether this prior is a calibration of the case: enough degrees of freedom and a spread above zero."""
        return self.calibrates and self.df >= CALIBRATED_DF and self.variance > 0

    def __post_init__(self) -> None:
        if not (self.variance >= 0 and math.isfinite(self.variance)) or self.df < 0:
            raise ValueError(f"a noise prior needs a finite variance >= 0 and df >= 0, got {self}")


@dataclass(frozen=True)
class TShift:
    """The pooled-t analysis of a shift on the log scale (contender minus baseline): the same questions as
    `rank_tests.ShiftAnalysis` answers (estimate, p-value, interval at any level), so `compare.py` treats both alike.
    `sigma` is the pooled spread of per-process log values (after the floor); `prior_df` the degrees of freedom
    earlier runs lent."""

    estimate: float
    p_value: float
    n1: int
    n2: int
    se: float
    df: int
    sigma: float
    deterministic: bool
    floored: bool = False
    prior_df: int = 0
    #: "t" (pooled, unpaired) or "paired-t" (over blocks)
    kind: str = "t"
    exact: bool = True  # under the model above; how far it holds is measured (docs/gating.md)
    #: the standard error "no change" is judged on, with the case's calibrated spread in place of the floor (see the
    #: module docstring); None: the same as `se`
    equivalence_se: float | None = None
    #: the processes varied far more than the prior says: it was set aside (the guard); with the two spreads
    prior_set_aside: bool = False
    observed_sigma: float = math.nan
    prior_sigma: float = math.nan
    #: "no change" judged on the spreads of the other cases counted on this machine (a case without a calibration of
    #: its own: `machine_noise.py`); None: not so judged
    machine: MachineEquivalence | None = None
    #: these processes vary beyond the noisiest case counted here: the machine's spreads were set aside
    machine_set_aside: bool = False

    def quantile(self, a: float) -> float:
        """The two-sided critical value at error level a."""
        return float(sps.t.isf(a / 2, self.df))

    def interval(self, a: float) -> tuple[float, float]:
        """Two-sided (1 - a) interval of the log shift."""
        if not 0 < a < 1:
            raise ValueError(f"interval level a must be in (0, 1), got {a}")
        if self.deterministic:
            return (self.estimate, self.estimate)
        half = self.quantile(a) * self.se
        return (self.estimate - half, self.estimate + half)

    @property
    def calibrated(self) -> bool:
        """Whether "no change" is judged on the case's calibrated spread (a narrower interval than `interval`)."""
        return self.equivalence_se is not None

    def equivalence_interval(self, a: float) -> tuple[float, float]:
        """The (1 - a) interval "no change" is judged on: `interval`, or with the calibrated spread's standard error,
        or on the machine's spreads (never wider than `interval`)."""
        if self.deterministic:
            return self.interval(a)
        if self.equivalence_se is not None:
            half = self.quantile(a) * self.equivalence_se
        elif self.machine is not None:
            # never narrower than these processes' own t-interval (their spread on their own degrees of freedom,
            # without the floor), never wider than the floor's
            own = float(sps.t.isf(a / 2, self.n1 + self.n2 - 2)) * self.observed_sigma * math.sqrt(
                1 / self.n1 + 1 / self.n2)
            half = min(max(self.machine.half_width(a), own), self.quantile(a) * self.se)
        else:
            return self.interval(a)
        return (self.estimate - half, self.estimate + half)


def pooled_t(log_baseline: np.ndarray, log_contender: np.ndarray, *, floor: float = 0.0,
             prior: NoisePrior | None = None, machine: MachineSpread | None = None) -> TShift:
    """The pooled two-sample t of log_contender - log_baseline (at least 2 values a side); `prior`: the noise earlier
    runs of the case lend (the module docstring: pooled; "no change" judged on it when it is a calibration; set
    aside when these processes vary far more); `machine`: the spreads of the other cases counted on this machine,
    for "no change" when the case has no calibration of its own (`machine_noise.py`)."""
    x = np.asarray(log_baseline, dtype=float)
    y = np.asarray(log_contender, dtype=float)
    n1, n2 = int(x.size), int(y.size)
    if n1 < 2 or n2 < 2:
        raise ValueError("the pooled t needs at least 2 processes a side")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("log values must be finite")
    estimate = float(y.mean() - x.mean())
    squares = float(((x - x.mean()) ** 2).sum() + ((y - y.mean()) ** 2).sum())
    df = n1 + n2 - 2
    observed = math.sqrt(squares / df)
    lent, set_aside = _lent(observed, df, prior)
    prior_df = 0
    if lent is not None:
        squares += lent.variance * lent.df
        df += lent.df
        prior_df = lent.df
    pooled = math.sqrt(squares / df)
    floored = pooled < floor
    sigma = max(pooled, floor)
    scale = math.sqrt(1 / n1 + 1 / n2)
    prior_sigma = math.sqrt(prior.variance) if prior is not None else math.nan
    if sigma == 0.0:  # only with floor 0: both sides constant (a deterministic metric), and the prior agrees
        p = 0.0 if estimate != 0 else 1.0
        return TShift(estimate, p, n1, n2, 0.0, df, 0.0, True, False, prior_df, prior_set_aside=set_aside,
                      observed_sigma=observed, prior_sigma=prior_sigma)
    se = sigma * scale
    p = float(2 * sps.t.sf(abs(estimate) / se, df))
    # never wider than the interval of the fixed floor: the calibrated spread takes the floor's place, nothing more
    case_calibrated = lent is not None and lent.calibrated
    equivalence_se = min(se, max(pooled, math.sqrt(lent.variance)) * scale) if lent is not None and case_calibrated \
        else None
    on_machine, machine_set_aside = _on_machine(machine, None if case_calibrated or set_aside else observed,
                                                n1 + n2 - 2, squares, df, scale)
    return TShift(estimate, p, n1, n2, se, df, sigma, False, floored, prior_df, equivalence_se=equivalence_se,
                  prior_set_aside=set_aside, observed_sigma=observed, prior_sigma=prior_sigma, machine=on_machine,
                  machine_set_aside=machine_set_aside)


def _on_machine(machine: MachineSpread | None, observed: float | None, own_df: int, squares: float, df: int,
                scale: float) -> tuple[MachineEquivalence | None, bool]:
    """(the mixture "no change" is judged on, whether the guard set the machine's spreads aside); (None, False) without
    them or when `observed` is None (the case has its own calibration, or its own history was set aside)."""
    if machine is None or observed is None:
        return None, False
    if machine.set_aside(observed ** 2, own_df, GUARD_LEVEL):
        return None, True
    return machine.equivalence(squares, df, math.sqrt(squares / df), scale), False


def _lent(observed: float, df: int, prior: NoisePrior | None) -> tuple[NoisePrior | None, bool]:
    """(the prior to pool, whether it was set aside): the guard of the module docstring. A prior of zero variance
    (a deterministic history) is set aside by any observed spread."""
    if prior is None or prior.df <= 0:
        return None, False
    if observed == 0.0:
        return prior, False
    if prior.variance == 0.0:
        return None, True
    ratio = observed ** 2 / prior.variance
    return (None, True) if ratio > float(sps.f.isf(GUARD_LEVEL, df, prior.df)) else (prior, False)


def pooled_prior(groups: list[np.ndarray]) -> NoisePrior | None:
    """The pooled within-group variance of per-process log values over earlier runs (one group per run and
    environment, at least 2 processes each); None when no group has 2."""
    squares, df, runs = 0.0, 0, 0
    for values in groups:
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        if values.size < 2:
            continue
        squares += float(((values - values.mean()) ** 2).sum())
        df += int(values.size) - 1
        runs += 1
    if df == 0:
        return None
    return NoisePrior(squares / df, df, runs)


def paired_t(d: np.ndarray, *, floor: float = 0.0) -> TShift:
    """The paired t of per-block log-ratios d (at least 2 blocks); `floor` is the per-process floor, so a block's
    log-ratio is taken to spread by at least sqrt(2) times it."""
    d = np.asarray(d, dtype=float)
    n = int(d.size)
    if n < 2:
        raise ValueError("the paired t needs at least 2 blocks")
    if not np.all(np.isfinite(d)):
        raise ValueError("log-ratios must be finite")
    estimate = float(d.mean())
    sigma = float(d.std(ddof=1))
    block_floor = floor * math.sqrt(2)
    floored = sigma < block_floor
    sigma = max(sigma, block_floor)
    if sigma == 0.0:
        return TShift(estimate, 0.0 if estimate != 0 else 1.0, n, n, 0.0, n - 1, 0.0, True, False, 0, "paired-t")
    se = sigma / math.sqrt(n)
    p = float(2 * sps.t.sf(abs(estimate) / se, n - 1))
    return TShift(estimate, p, n, n, se, n - 1, sigma, False, floored, 0, "paired-t")
