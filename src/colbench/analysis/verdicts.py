"""A/B verdicts a maintainer can act on: regression, improvement, no change, or inconclusive.

Statistical design (see also docs in the functions below):

- **Unit of replication: the process.** Iterations inside one process share its memory layout, CPU
  placement and caches, so they are correlated and do not count as independent evidence. Each process is
  reduced to the median of its iterations; inference is over those per-process values.
- **Scale: log.** The effect is the ratio contender / baseline; a log-ratio makes it symmetric and the
  threshold a factor (``threshold=0.03`` means a factor of 1.03 either way: a lower-is-better metric
  regresses above 1.03 and improves below 1/1.03 = 0.971).
- **Two test families, chosen per metric and sample size** (the metric's `test` in `model/metrics.py`):
  *rank*: Hodges–Lehmann with exact rank intervals (`rank_tests.py`), paired by block when both sides
  carry block indices (the runner interleaves A and B in randomized blocks, so slow drift of the machine
  cancels in the per-block log-ratio), unpaired (Mann–Whitney) otherwise; distribution-free, robust to
  heavy tails, but its smallest p-value is fixed by the count of samples (8 blocks before p <= 0.01 is
  possible at all). *t*: a pooled two-sample t on per-process log values (`t_tests.py`), whose width
  follows the noise, with the metric's noise floor and, for metrics of stable noise, degrees of freedom
  lent by earlier runs of the case. "auto" (wall time, memory, sizes) takes the t where the rank test
  cannot reach the family's smallest level with the samples at hand or reaches it only barely
  (`RANK_REACH`), and the rank test beyond; "t" (instruction counts: near-normal, tiny noise) always the
  t. The choice depends on n, the family size and alpha only, never on the data.
- **Multiplicity.** p-values (of "ratio = 1") are adjusted across every comparison of the suite (Holm by
  default, or Benjamini–Hochberg). Intervals are widened to match: with Holm every interval is a
  Bonferroni interval at level 1 - alpha/m, so with probability >= 1 - alpha *all* intervals cover
  their true ratios at once and no verdict in the suite is wrong. With BH the R selected (BH-significant)
  comparisons get Benjamini–Yekutieli FCR intervals at level 1 - R*alpha/m; the others keep the
  Bonferroni level, so "no change" claims stay family-wise protected under both methods.
- **Verdicts** (on the interval at the adjusted level, in "worse" orientation for the metric) follow
  minimum-effect and equivalence testing, the way a CI gate needs them:
  *regression* when the interval excludes 1 + floor (the change is real: significant) *and* the
  estimate is at least 1 + threshold (it is as large as the change that matters); improvement likewise
  on the good side; *no change* when the whole interval lies inside the band (two one-sided tests:
  equivalence); otherwise *inconclusive*, saying why (too few samples to ever reach the level, an
  interval wider than the band, a real change whose size is not yet pinned down). The floor defaults to 0
  ("the interval excludes 1"). Error rates: at a true ratio <= 1 + floor a regression is called with
  probability <= alpha/2 (family-wise); at a true change beyond the threshold "no change" likewise. A true
  change between the floor and the threshold may be called a regression when its estimate reaches the
  threshold; that is a real slowdown, honestly reported with its interval. A side with fewer than two
  processes never gets a verdict.
- **Per block**, the log-ratio is the Hodges–Lehmann shift between the two sides' iterations in that
  block (the median of all contender-minus-baseline differences of log times): it uses every iteration,
  shrugs off an interrupted one, and is the estimate a variance-components model would make when
  processes differ. Inference stays over blocks, so correlated iterations inside a process never count
  as independent evidence.
- **Power.** Every comparison carries its minimum detectable effect (`power.py`): the smallest slowdown
  this n and this noise would have called a regression with 80% and 95% probability.
- **Deterministic metrics** (e.g. file size: every process gives the identical value): when each side
  has >= 2 processes and the differences have no spread at all, the interval is the point itself.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any, Literal

import numpy as np

from colbench.analysis.machine_noise import MachineSpread
from colbench.analysis.power import HL_VARIANCE_FACTOR, mde_from_se
from colbench.analysis.rank_tests import (
    ShiftAnalysis,
    paired_shift,
    pairs_needed,
    processes_needed,
    unpaired_shift,
)
from colbench.analysis.stats import process_locations, qn_sigma
from colbench.analysis.t_tests import NoisePrior, TShift, paired_t, pooled_t
from colbench.model.metrics import METRICS, Direction, Test, metric_or_none
from colbench.words import ratio_text

Method = Literal["holm", "bh", "bonferroni", "none"]
Samples = Sequence[Sequence[float]]
# the short form of a case: (baseline, contender) or (baseline, contender, direction)
CaseTuple = tuple[Samples, Samples] | tuple[Samples, Samples, Direction | None]

#: "auto" takes the rank test once the samples are at least this many times what the rank test needs to reach the
#: family's smallest level at all; below, where its interval is the extreme order statistics or nothing, the t.
RANK_REACH = 1.25


class Verdict(StrEnum):
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NO_CHANGE = "no change"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class CaseInput:
    """Raw samples of one comparison: per-process lists of per-iteration values for each side.

    `baseline_blocks` / `contender_blocks` give the block index of each process (same order as the
    process lists); when both are given the comparison is paired by block. `direction` defaults to the
    metric's (`model/metrics.py`). `threshold`, when set, replaces the suite's for this comparison.
    """

    baseline: Samples
    contender: Samples
    direction: Direction | None = None
    metric: str = "time"
    baseline_blocks: Sequence[int] | None = None
    contender_blocks: Sequence[int] | None = None
    #: what the samples measure ("wall" time, "cpu" time, or "value" for one number per process)
    basis: str = "wall"
    #: a second view of the same case compared alongside (wall time when `basis` is "cpu"): each at half
    #: the error level, and a regression on either is a regression (see `basis.py`)
    check: CaseInput | None = None
    threshold: float | None = None
    #: the test family (default: the metric's); see the module docstring
    test: Test | None = None
    #: earlier runs' noise for the t (metrics of stable noise only; `t_tests.py`)
    prior: NoisePrior | None = None
    #: the spreads of the other cases counted on this machine, for "no change" of a case without a calibration of its
    #: own (`machine_noise.py`)
    machine: MachineSpread | None = None
    #: the unit of a value metric whose unit is the benchmark's own (an asv `track_*`'s `unit` attribute); "" else
    unit: str = ""

    @property
    def resolved_direction(self) -> Direction:
        if self.direction is not None:
            return self.direction
        known = metric_or_none(self.metric)
        return known.direction if known else "lower_is_better"

    @property
    def resolved_test(self) -> Test:
        if self.test is not None:
            return self.test
        known = metric_or_none(self.metric)
        return known.test if known else "rank"

    @property
    def noise_floor(self) -> float:
        known = metric_or_none(self.metric)
        return known.noise_floor if known else 0.0


@dataclass(frozen=True)
class CaseComparison:
    """The outcome of one comparison.

    `ratio` is contender / baseline (Hodges–Lehmann); `ci_low`/`ci_high` bound it at `ci_level`, the
    multiplicity-adjusted confidence (e.g. 0.9995 for 20 comparisons at alpha 0.01 with Holm).
    `p_value` tests ratio == 1 before adjustment, `p_adjusted` after. `n_baseline`/`n_contender` count
    processes; `n_blocks` is the number of blocks used when `paired`. Medians and CVs are over the
    per-process medians (the CV is the between-process spread that inference works with).
    `basis` says what was compared (wall or CPU time, see `basis.py`); `sigma_log` is the robust spread of
    the per-block log-ratios (per-process log values when unpaired); `mde_80`/`mde_95` the smallest
    slowdown (0.05 = 5%) this comparison would have called a regression with 80%/95% probability.
    """

    key: Hashable
    metric: str
    direction: Direction
    verdict: Verdict
    reason: str
    ratio: float
    ci_low: float
    ci_high: float
    ci_level: float
    p_value: float
    p_adjusted: float
    paired: bool
    n_baseline: int
    n_contender: int
    n_blocks: int
    baseline_median: float
    contender_median: float
    baseline_cv: float
    contender_cv: float
    threshold: float
    alpha: float
    method: str
    floor: float = 0.0
    basis: str = "wall"
    sigma_log: float = math.nan
    mde_80: float = math.inf
    mde_95: float = math.inf
    #: which test decided: "rank" (exact rank interval) or "t" (pooled t; `df` degrees of freedom, `prior_df` of
    #: them lent by `prior_runs` earlier runs)
    test: str = "rank"
    df: int = 0
    prior_df: int = 0
    prior_runs: int = 0
    #: the case's calibrated spread (earlier runs' `prior`) took the place of the metric's fixed floor; or the
    #: processes varied far more than it says and it was set aside (t_tests.py: the guard)
    calibrated: bool = False
    prior_set_aside: bool = False
    #: "no change" was judged on the spreads of the other cases counted on this machine (`machine_noise.py`); or these
    #: processes varied beyond the noisiest of them and they were set aside
    machine_calibrated: bool = False
    machine_set_aside: bool = False
    #: the benchmark's own unit of its values (an asv `track_*`'s `unit`); "" when the metric has its own
    unit: str = ""

    @property
    def label(self) -> str:
        key = self.key
        if isinstance(key, tuple):
            return " ".join(str(k) for k in key)
        return str(key)

    @property
    def change(self) -> float:
        """Relative change contender vs baseline (ratio - 1)."""
        return self.ratio - 1.0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict (infinite bounds become None)."""
        out = asdict(self)
        out["key"] = self.label
        out["verdict"] = str(self.verdict)
        for name, value in list(out.items()):
            if isinstance(value, float) and not math.isfinite(value):
                out[name] = None
        return out


# ---------------------------------------------------------------------------------------------- input


def _as_case(value: CaseInput | CaseTuple) -> CaseInput:
    if isinstance(value, CaseInput):
        return value
    if isinstance(value, tuple) and len(value) in (2, 3):
        direction = value[2] if len(value) == 3 else None
        return CaseInput(baseline=value[0], contender=value[1], direction=direction)
    raise TypeError("a case is a CaseInput or a (baseline, contender[, direction]) tuple")


def _locations(samples: Samples, side: str) -> np.ndarray:
    locs = process_locations(samples)
    if locs.size and np.any(locs <= 0):
        raise ValueError(f"{side} samples must be positive (ratios are taken on the log scale)")
    return locs


def block_log_ratios(case: CaseInput) -> np.ndarray:
    """Per block: the Hodges–Lehmann shift from the baseline's iterations to the contender's, on the log scale.

    That is the median of every difference log(contender iteration) - log(baseline iteration) within the
    block. Blocks missing one side (a crashed process) are dropped. A block may hold several processes
    per side (A B B A); their iterations are pooled inside the block.
    """
    assert case.baseline_blocks is not None and case.contender_blocks is not None
    if len(case.baseline_blocks) != len(case.baseline) or len(case.contender_blocks) != len(case.contender):
        raise ValueError("one block index per process is needed on each side")
    sides: list[dict[int, list[float]]] = [{}, {}]
    for side, (samples, blocks) in enumerate(
        [(case.baseline, case.baseline_blocks), (case.contender, case.contender_blocks)]
    ):
        for proc, block in zip(samples, blocks, strict=True):
            values = np.asarray(proc, dtype=float)
            if values.size == 0:
                continue
            if not (np.all(values > 0) and np.all(np.isfinite(values))):
                raise ValueError("samples must be positive and finite (ratios are taken on the log scale)")
            sides[side].setdefault(int(block), []).extend(np.log(values).tolist())
    common = sorted(set(sides[0]) & set(sides[1]))
    return np.array(
        [float(np.median(np.subtract.outer(sides[1][b], sides[0][b]))) for b in common], dtype=float
    )


@dataclass
class _Prepared:
    key: Hashable
    case: CaseInput
    locs_b: np.ndarray
    locs_c: np.ndarray
    analysis: ShiftAnalysis | TShift | None
    paired: bool
    n_blocks: int
    early_reason: str | None
    check: _Prepared | None = None
    #: the CPU-time view was set aside: this n reaches the error level, but not half of it (see compare_suite)
    wall_alone: bool = False

    def reaches(self, level: float) -> bool:
        """Whether this many blocks (or processes) can give p <= level at all."""
        if isinstance(self.analysis, TShift):
            return True
        if self.paired:
            return self.n_blocks >= pairs_needed(level)
        return min(self.locs_b.size, self.locs_c.size) >= processes_needed(level)

    @property
    def p_value(self) -> float:
        """Raw p of "ratio = 1"; with a check, Bonferroni over the two views."""
        p = self.analysis.p_value if self.analysis is not None else 1.0
        if self.check is None:
            return p
        return min(1.0, 2.0 * min(p, self.check.p_value))


def uses_t(case: CaseInput, smallest_level: float, paired: bool | None = None) -> bool:
    """Whether this case is decided by a t rather than a rank test, at a family whose smallest error level (Holm's
    first, alpha / m) is `smallest_level`. "t": always (the pooled t). "auto": the paired t, for sides interleaved in
    blocks, while the blocks are fewer than RANK_REACH times what the rank test needs to reach that level; unpaired
    sides stay with the rank tests (runs apart share no block to cancel the machine's state). Depends on the counts
    of processes and blocks only."""
    test = case.resolved_test
    if test != "auto":
        return test == "t"
    if case.baseline_blocks is None or case.contender_blocks is None or paired is False:
        return False
    blocks = len(set(case.baseline_blocks) & set(case.contender_blocks))
    return blocks < RANK_REACH * pairs_needed(smallest_level)


def _check_blocks(key: Hashable, case: CaseInput, paired: bool | None) -> None:
    has_blocks = case.baseline_blocks is not None and case.contender_blocks is not None
    if paired and not has_blocks:
        raise ValueError(f"{key}: paired comparison requested but block indices are missing")
    if has_blocks and (len(case.baseline_blocks or ()) != len(case.baseline)
                       or len(case.contender_blocks or ()) != len(case.contender)):
        raise ValueError("one block index per process is needed on each side")


def _prepare(key: Hashable, case: CaseInput, paired: bool | None, smallest_level: float) -> _Prepared:
    _check_blocks(key, case, paired)
    prepare = _prepare_t if uses_t(case, smallest_level, paired) else _prepare_one
    prep = prepare(key, case, paired)
    if case.check is not None:
        prep.check = prepare(key, case.check, paired)
    return prep


def _too_few(locs_b: np.ndarray, locs_c: np.ndarray) -> str | None:
    if locs_b.size < 2 or locs_c.size < 2:
        return (f"too few samples: {locs_b.size} baseline and {locs_c.size} contender processes"
                " (never a verdict from fewer than 2 per side)")
    return None


def _prepare_t(key: Hashable, case: CaseInput, paired: bool | None = None) -> _Prepared:
    locs_b = _locations(case.baseline, "baseline")
    locs_c = _locations(case.contender, "contender")
    reason = _too_few(locs_b, locs_c)
    if reason:
        return _Prepared(key, case, locs_b, locs_c, None, False, 0, reason)
    if case.resolved_test == "t":
        analysis = pooled_t(np.log(locs_b), np.log(locs_c), floor=case.noise_floor, prior=case.prior,
                            machine=case.machine)
        return _Prepared(key, case, locs_b, locs_c, analysis, False, 0, None)
    d = block_log_ratios(case)
    if d.size < 2:
        reason = f"too few samples: {d.size} complete blocks (need at least 2 to pair)"
        return _Prepared(key, case, locs_b, locs_c, None, True, int(d.size), reason)
    return _Prepared(key, case, locs_b, locs_c, paired_t(d, floor=case.noise_floor), True, int(d.size), None)


def _prepare_one(key: Hashable, case: CaseInput, paired: bool | None) -> _Prepared:
    locs_b = _locations(case.baseline, "baseline")
    locs_c = _locations(case.contender, "contender")
    has_blocks = case.baseline_blocks is not None and case.contender_blocks is not None
    if paired and not has_blocks:
        raise ValueError(f"{key}: paired comparison requested but block indices are missing")
    reason = _too_few(locs_b, locs_c)
    if reason:
        return _Prepared(key, case, locs_b, locs_c, None, bool(paired), 0, reason)
    use_paired = bool(has_blocks) and paired is not False
    if use_paired:
        d = block_log_ratios(case)
        if d.size >= 2:
            return _Prepared(key, case, locs_b, locs_c, paired_shift(d), True, int(d.size), None)
        if paired:
            reason = f"too few samples: {d.size} complete blocks (need at least 2 to pair)"
            return _Prepared(key, case, locs_b, locs_c, None, True, int(d.size), reason)
    analysis = unpaired_shift(np.log(locs_b), np.log(locs_c))
    return _Prepared(key, case, locs_b, locs_c, analysis, False, 0, None)


# ------------------------------------------------------------------------------------- multiplicity


def adjust_pvalues(p_values: Sequence[float], method: Method = "holm", family_size: int | None = None) -> list[float]:
    """Adjusted p-values (Holm step-down, Benjamini–Hochberg step-up, Bonferroni, or none).

    `family_size` may exceed the number of p-values given: the missing members are taken as p = 1
    (the conservative choice), which is how the adaptive mode keeps the whole suite as the family
    while only re-testing the undecided cases.
    """
    p = np.asarray(p_values, dtype=float)
    k = p.size
    m = max(k, family_size or k)
    if k == 0:
        return []
    if method == "none":
        return [float(v) for v in p]
    if method == "bonferroni":
        return [float(v) for v in np.minimum(1.0, p * m)]
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    ranks = np.arange(1, k + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, ranked * (m - ranks + 1)))
    elif method == "bh":
        adj = np.minimum.accumulate(np.minimum(1.0, ranked * m / ranks)[::-1])[::-1]
    else:
        raise ValueError(f"unknown multiplicity method {method!r} (holm, bh, bonferroni, none)")
    out = np.empty(k)
    out[order] = adj
    return [float(v) for v in out]


def _interval_levels(p_adj: Sequence[float], alpha: float, method: Method, m: int) -> list[float]:
    """Per-comparison two-sided error level of the interval (1 - confidence)."""
    if method == "none":
        return [alpha] * len(p_adj)
    if method == "bh":
        selected = [p <= alpha for p in p_adj]
        r = sum(selected)
        return [alpha * r / m if s else alpha / m for s in selected]
    return [alpha / m] * len(p_adj)


# -------------------------------------------------------------------------------------------- verdict


def _describe_change(log_ratio: float, metric: str) -> str:
    """E.g. '6.1% slower' for a time ratio of 1.061."""
    up, down = METRICS[metric].words if metric in METRICS else ("higher", "lower")
    change = math.expm1(log_ratio)
    return f"{abs(change) * 100:.1f}% {up if change > 0 else down}"


def decide(
    estimate: float,
    low: float,
    high: float,
    *,
    threshold: float,
    floor: float = 0.0,
    significant: bool | None = None,
    direction: Direction = "lower_is_better",
) -> Verdict:
    """The verdict rule on a log-ratio estimate and its interval (contender / baseline, log scale).

    Regression: the interval excludes ln(1 + floor) on the bad side and the estimate reaches
    ln(1 + threshold); improvement likewise on the good side; no change: the interval lies within
    +/- ln(1 + threshold); otherwise inconclusive. `significant` (the multiplicity-adjusted p <= alpha)
    defaults to "the interval excludes 0". E.g. for time, 1.051 [1.027, 1.074] at threshold 3% is a
    regression; 1.01 [0.985, 1.028] is no change; 1.02 [0.95, 1.09] is inconclusive.
    """
    delta, noise = math.log1p(threshold), math.log1p(floor)
    if direction == "lower_is_better":
        bad_estimate, bad_lo, bad_hi = estimate, low, high
    else:
        bad_estimate, bad_lo, bad_hi = -estimate, -high, -low
    if significant is None:
        significant = bad_lo > 0 or bad_hi < 0
    if significant and bad_lo > noise and bad_estimate >= delta:
        return Verdict.REGRESSION
    if significant and bad_hi < -noise and bad_estimate <= -delta:
        return Verdict.IMPROVEMENT
    if -delta <= bad_lo and bad_hi <= delta:
        return Verdict.NO_CHANGE
    return Verdict.INCONCLUSIVE


def within_band(low: float, high: float, threshold: float) -> bool:
    """Whether a log interval lies within +/- ln(1 + threshold): "no change" (equivalence)."""
    delta = math.log1p(threshold)
    return -delta <= low and high <= delta


def _calibrated_no_change(prep: _Prepared, level: float, threshold: float) -> tuple[float, float, str] | None:
    """(low, high, what the reason adds) when the equivalence interval on the case's calibrated spread lies within the
    band (t_tests.py: "no change" on the calibrated spread); None otherwise."""
    analysis = prep.analysis
    if not isinstance(analysis, TShift) or not (analysis.calibrated or analysis.machine is not None):
        return None
    low, high = analysis.equivalence_interval(level)
    if not within_band(low, high, threshold):
        return None
    if analysis.machine is not None:
        spreads = prep.case.machine.range_text() if prep.case.machine is not None else ""
        return low, high, (f" (on this machine's spreads of counts: {analysis.machine.cases} cases counted here, "
                           f"{spreads}, weighed by these processes)")
    runs = prep.case.prior.runs if prep.case.prior is not None else 0
    return low, high, f" (on the case's calibrated spread, {analysis.prior_sigma:.3%} over {runs} earlier runs)"


def _verdict(
    prep: _Prepared, level: float, p_adj: float, threshold: float, alpha: float, floor: float
) -> tuple[Verdict, str, float, float]:
    """Verdict, reason and the log interval (contender/baseline) at the given error level."""
    if prep.analysis is None:
        return Verdict.INCONCLUSIVE, prep.early_reason or "too few samples", -math.inf, math.inf
    analysis = prep.analysis
    lo, hi = analysis.interval(level)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        if prep.paired:
            what, need = f"{analysis.n1} blocks", f"{pairs_needed(level)} blocks"
        else:
            what = f"{analysis.n1}+{analysis.n2} processes"
            need = f"{processes_needed(level)} processes per side"
            if min(analysis.n1, analysis.n2) >= processes_needed(level):
                # enough processes, but tied values (e.g. one side a constant) leave no exact rank interval
                reason = (f"no exact rank interval at {level:.2g}: values are tied across the two sides (e.g. one "
                          "side is a constant), so the rank test cannot order them")
                return Verdict.INCONCLUSIVE, reason, lo, hi
        reason = f"too few samples: {what} can never reach p <= {level:.2g} (need >= {need})"
        return Verdict.INCONCLUSIVE, reason, lo, hi
    direction = prep.case.resolved_direction
    significant = p_adj <= alpha
    verdict = decide(analysis.estimate, lo, hi, threshold=threshold, floor=floor, significant=significant,
                     direction=direction)
    tag = " (deterministic)" if analysis.deterministic else ""
    calibrated = _calibrated_no_change(prep, level, threshold) if verdict == Verdict.INCONCLUSIVE else None
    if calibrated is not None:
        verdict, lo, hi, tag = Verdict.NO_CHANGE, *calibrated
    ci = f"CI {ratio_text(math.exp(lo))}-{ratio_text(math.exp(hi))}"
    band = f"+/-{threshold * 100:g}%"
    beyond = "1" if floor == 0 else f"{1 + floor:g}"
    change = _describe_change(analysis.estimate, prep.case.metric)
    if verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
        return verdict, f"{change}, {ci} excludes {beyond}, estimate beyond {band}{tag}", lo, hi
    if verdict == Verdict.NO_CHANGE:
        small = ", a real but smaller change" if significant and analysis.estimate != 0 else ""
        return Verdict.NO_CHANGE, f"{ci} within {band}{small}{tag}", lo, hi
    delta, noise = math.log1p(threshold), math.log1p(floor)
    bad_lo, bad_hi = (lo, hi) if direction == "lower_is_better" else (-hi, -lo)
    if significant and (bad_lo > noise or bad_hi < -noise):
        reason = f"changed ({change}), but whether by {band} or more is open: {ci}"
    elif bad_hi - bad_lo > 2 * delta:
        more = "processes" if isinstance(analysis, TShift) else "blocks"
        reason = f"too noisy: {ci} is wider than the {band} band; more {more} needed"
    else:
        reason = f"{ci} crosses the {band} threshold"
    return Verdict.INCONCLUSIVE, reason, lo, hi


def _noise_and_mde(prep: _Prepared, level: float, threshold: float, floor: float) -> tuple[float, float, float]:
    """(sigma on the log scale, MDE at 80% power, MDE at 95% power) of one comparison."""
    if prep.analysis is None:
        return math.nan, math.inf, math.inf
    analysis = prep.analysis
    if isinstance(analysis, TShift):
        mdes = [mde_from_se(analysis.se, level=level, power=p, threshold=threshold, floor=floor, df=analysis.df)
                for p in (0.8, 0.95)]
        return analysis.sigma, mdes[0], mdes[1]
    if prep.paired:
        sigma = qn_sigma(np.asarray(block_log_ratios(prep.case)))
        n_eff = float(analysis.n1)
        attainable = analysis.n1 >= pairs_needed(level)
    else:
        centred = [np.log(x) - np.median(np.log(x)) for x in (prep.locs_b, prep.locs_c)]
        sigma = qn_sigma(np.concatenate(centred))
        n_eff = 1.0 / (1.0 / analysis.n1 + 1.0 / analysis.n2)
        attainable = min(analysis.n1, analysis.n2) >= processes_needed(level)
    if analysis.deterministic:
        sigma = 0.0
    if not attainable or not math.isfinite(sigma):
        return sigma, math.inf, math.inf
    se = math.sqrt(HL_VARIANCE_FACTOR) * sigma / math.sqrt(n_eff)
    mdes = [mde_from_se(se, level=level, power=p, threshold=threshold, floor=floor) for p in (0.8, 0.95)]
    return sigma, mdes[0], mdes[1]


def _between_cv(locs: np.ndarray) -> float:
    if locs.size < 2 or locs.mean() == 0:
        return math.nan
    return float(locs.std(ddof=1) / locs.mean())


def compare_suite(
    cases: Mapping[Any, CaseInput | CaseTuple],
    *,
    threshold: float | None = None,
    alpha: float = 0.01,
    method: Method = "holm",
    paired: bool | None = None,
    family_size: int | None = None,
    floor: float = 0.0,
) -> list[CaseComparison]:
    """Compare every case of a suite with the error rate controlled across all of them.

    `cases` maps a key (anything hashable: a case id, or (case id, metric)) to a `CaseInput` or a
    `(baseline, contender[, direction])` tuple. Every entry is one member of the family; put time,
    memory and file size of all cases in one call to control the error rate over every verdict shown.
    `paired=None` pairs by block whenever both sides carry block indices; False forces unpaired;
    True requires blocks. `family_size` (>= number of cases) keeps a larger family, for adaptive looks.
    `threshold`: the smallest change that matters for every case, else each case's own (`CaseInput.threshold`,
    else its metric's default in `model/metrics.py`). `floor` (< threshold): a regression's interval must exclude
    1 + floor. Results come back in the order of `cases`.
    """
    _check_settings(alpha, threshold, floor)
    m = max(len(cases), family_size or 0)
    prepared = [_prepare(key, _as_case(value), paired, alpha / max(m, 1)) for key, value in cases.items()]
    if not prepared:
        return []
    _wall_alone_where_too_few(prepared, alpha / m)
    raw_p = [p.p_value for p in prepared]
    p_adj = adjust_pvalues(raw_p, method, family_size=m)
    levels = _interval_levels(p_adj, alpha, method, m)
    settings = _Settings(threshold, alpha, method, floor)
    return [_compare_case(prep, p, pa, level, settings)
            for prep, p, pa, level in zip(prepared, raw_p, p_adj, levels, strict=True)]


def _check_settings(alpha: float, threshold: float | None, floor: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if threshold is not None and not threshold > 0:
        raise ValueError(f"threshold must be > 0, got {threshold}")
    if floor < 0 or (threshold is not None and floor >= threshold):
        raise ValueError(f"floor must be in [0, threshold), got {floor}")


def _wall_alone_where_too_few(prepared: list[_Prepared], smallest_level: float) -> None:
    """A CPU-time view with its wall-time check splits each case's error level in two. Where the samples reach
    the family's smallest level (alpha / m) but not half of it, the split would turn a decidable case into
    "too few samples": compare wall time alone then. The choice depends on n, m and alpha only, never on the
    data, so the test stays exact."""
    for index, prep in enumerate(prepared):
        check = prep.check
        if check is not None and check.analysis is not None and not check.reaches(smallest_level / 2) \
                and check.reaches(smallest_level):
            prepared[index] = replace(check, wall_alone=True)


@dataclass(frozen=True)
class _Settings:
    """compare_suite's settings that every case's verdict reads."""

    threshold: float | None
    alpha: float
    method: Method
    floor: float


def _compare_case(prep: _Prepared, p: float, pa: float, level: float, settings: _Settings) -> CaseComparison:
    """One case's comparison at its interval level (halved when a wall-time check goes with a CPU-time view)."""
    alpha, floor = settings.alpha, settings.floor
    case_threshold = prep.case.threshold or settings.threshold or _metric_threshold(prep.case.metric)
    if floor >= case_threshold:
        raise ValueError(f"floor {floor} must be below the threshold {case_threshold} of {prep.key}")
    if prep.check is not None:
        level /= 2  # Bonferroni over the two views of the case
    verdict, reason, lo, hi = _verdict(prep, level, pa, case_threshold, alpha, floor)
    if prep.check is not None:
        checked = _verdict(prep.check, level, pa, case_threshold, alpha, floor)
        if checked[0] == Verdict.REGRESSION and verdict != Verdict.REGRESSION:
            cpu_verdict = verdict
            prep = prep.check  # report the view that found the regression
            verdict, reason, lo, hi = checked
            reason = f"{reason} (wall-time check; CPU time: {cpu_verdict})"
        else:
            reason = f"{reason}; wall-time check: {checked[0]}"
    sigma, mde_80, mde_95 = _noise_and_mde(prep, level, case_threshold, floor)
    if prep.wall_alone:
        reason = f"{reason} (wall time alone: {prep.n_blocks or prep.locs_b.size} samples cannot split the " \
                 "error level with a CPU-time view)"
    reason += _prior_note(prep.analysis, prep.case.prior)
    estimate = _log_estimate(prep)
    return CaseComparison(
        key=prep.key,
        metric=prep.case.metric,
        direction=prep.case.resolved_direction,
        verdict=verdict,
        reason=reason,
        ratio=math.exp(estimate) if math.isfinite(estimate) else math.nan,
        ci_low=math.exp(lo),
        ci_high=math.exp(hi),
        ci_level=1.0 - level,
        p_value=p,
        p_adjusted=pa,
        paired=prep.paired,
        n_baseline=int(prep.locs_b.size),
        n_contender=int(prep.locs_c.size),
        n_blocks=prep.n_blocks,
        baseline_median=float(np.median(prep.locs_b)) if prep.locs_b.size else math.nan,
        contender_median=float(np.median(prep.locs_c)) if prep.locs_c.size else math.nan,
        baseline_cv=_between_cv(prep.locs_b),
        contender_cv=_between_cv(prep.locs_c),
        threshold=case_threshold,
        alpha=alpha,
        method=settings.method,
        floor=floor,
        basis=prep.case.basis,
        sigma_log=sigma,
        mde_80=mde_80,
        mde_95=mde_95,
        unit=prep.case.unit,
        **_test_fields(prep.analysis, prep.case.prior),
    )


def _log_estimate(prep: _Prepared) -> float:
    """The shift's estimate on the log scale; without a test, the log ratio of the medians."""
    estimate = prep.analysis.estimate if prep.analysis is not None else math.nan
    if prep.analysis is None and prep.locs_b.size and prep.locs_c.size:
        estimate = math.log(np.median(prep.locs_c) / np.median(prep.locs_b))
    return estimate


def _metric_threshold(name: str) -> float:
    known = metric_or_none(name)
    return (known or METRICS["time"]).threshold


def _test_fields(analysis: ShiftAnalysis | TShift | None, prior: NoisePrior | None) -> dict[str, Any]:
    if isinstance(analysis, TShift):
        return {"test": analysis.kind, "df": analysis.df, "prior_df": analysis.prior_df,
                "prior_runs": prior.runs if prior is not None and analysis.prior_df else 0,
                "calibrated": analysis.calibrated, "prior_set_aside": analysis.prior_set_aside,
                "machine_calibrated": analysis.machine is not None, "machine_set_aside": analysis.machine_set_aside}
    return {"test": "rank"}


def _prior_note(analysis: ShiftAnalysis | TShift | None, prior: NoisePrior | None) -> str:
    """What the verdict's reason says of the spread earlier runs (or the machine's other cases) lent: only when the
    guard set it aside."""
    if isinstance(analysis, TShift) and analysis.machine_set_aside:
        return (f"; these processes vary by {analysis.observed_sigma:.3%}, more than any case counted on this machine: "
                "judged on their own spread")
    if not isinstance(analysis, TShift) or not analysis.prior_set_aside or prior is None:
        return ""
    return (f"; these processes vary by {analysis.observed_sigma:.3%}, far more than the case's earlier runs "
            f"({analysis.prior_sigma:.3%} over {prior.runs} runs): judged on their own spread")


def compare_case(
    baseline: Samples,
    contender: Samples,
    *,
    direction: Direction | None = None,
    metric: str = "time",
    threshold: float | None = None,
    alpha: float = 0.01,
    paired: bool | None = None,
    baseline_blocks: Sequence[int] | None = None,
    contender_blocks: Sequence[int] | None = None,
    key: Hashable = "case",
    test: Test | None = None,
    prior: NoisePrior | None = None,
    machine: MachineSpread | None = None,
) -> CaseComparison:
    """Compare one case on its own (a family of one: interval at 1 - alpha).

    `baseline` and `contender` are per-process lists of per-iteration values. See `compare_suite` for
    a whole suite, which is what a CI gate should use.
    """
    case = CaseInput(baseline, contender, direction, metric, baseline_blocks, contender_blocks, test=test,
                     prior=prior, machine=machine)
    return compare_suite({key: case}, threshold=threshold, alpha=alpha, method="holm", paired=paired)[0]


def exit_code(comparisons: Sequence[CaseComparison], fail_on_inconclusive: bool = False) -> int:
    """0 no regression, 1 a regression was found, 3 inconclusive results present (only when asked).

    A regression wins over inconclusive results. Usage and tool errors (2) are the CLI's business.
    """
    verdicts = {c.verdict for c in comparisons}
    if Verdict.REGRESSION in verdicts:
        return 1
    if fail_on_inconclusive and Verdict.INCONCLUSIVE in verdicts:
        return 3
    return 0


def count_verdicts(comparisons: Sequence[CaseComparison]) -> dict[Verdict, int]:
    """How many comparisons got each verdict (every verdict present as a key)."""
    counts = {v: 0 for v in Verdict}
    for c in comparisons:
        counts[c.verdict] += 1
    return counts
