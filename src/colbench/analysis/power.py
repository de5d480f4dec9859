"""What a comparison could have seen: the minimum detectable effect (MDE) and the blocks a change needs.

The verdict rule (`compare.py`) calls a regression when the interval at level `a` excludes a ratio of
1 + floor and the estimate is at least 1 + threshold. For a paired comparison over n blocks whose
per-block log-ratios spread with standard deviation sigma, the Hodges–Lehmann estimate has standard
error about ``se = sqrt(pi/3) * sigma / sqrt(n)`` (its efficiency against the mean is 3/pi under normal
noise). A true log change delta is called a regression with probability >= power when both

    delta - z_{1-a/2} * se - z_{power} * se >= ln(1 + floor)       (the interval clears the floor)
    delta - z_{power} * se                  >= ln(1 + threshold)   (the estimate clears the threshold)

so the smallest such change, as a relative change, is::

    MDE = exp(max(ln(1 + floor) + (z_{1-a/2} + z_{power}) * se, ln(1 + threshold) + z_{power} * se)) - 1

It shrinks with sqrt(n) and never goes below the threshold. Fewer blocks than the exact signed-rank test
needs to reach level `a` at all give an infinite MDE. sigma is estimated robustly (the Qn scale of the
per-block log-ratios, `stats.qn_sigma`), so one odd block does not make a run look blind.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from colbench.analysis.rank_tests import pairs_needed
from colbench.analysis.scipy_stats import stats as sps
from colbench.model.metrics import DEFAULT_THRESHOLD

#: Variance of the Hodges–Lehmann estimate relative to the mean's, under normal noise.
HL_VARIANCE_FACTOR = math.pi / 3


def standard_error(sigma: float, n: int) -> float:
    """Standard error of the Hodges–Lehmann shift over n blocks with per-block spread sigma (log scale)."""
    if n < 1 or not math.isfinite(sigma):
        return math.inf
    return math.sqrt(HL_VARIANCE_FACTOR) * sigma / math.sqrt(n)


def mde_from_se(se: float, *, level: float, power: float = 0.8, threshold: float = DEFAULT_THRESHOLD,
                floor: float = 0.0, df: int | None = None) -> float:
    """Smallest relative slowdown called a regression with probability `power`, given the standard error
    of the log-ratio estimate and the two-sided error level of the interval (a t interval with `df` degrees of
    freedom when given, else a normal one)."""
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if not math.isfinite(se):
        return math.inf
    z_level = float(sps.t.isf(level / 2, df) if df else sps.norm.isf(level / 2))
    z_power = float(sps.norm.ppf(power))
    log_mde = max(math.log1p(floor) + (z_level + z_power) * se, math.log1p(threshold) + z_power * se)
    return math.expm1(log_mde)


def minimum_detectable_effect(
    sigma: float, n: int, *, level: float, power: float = 0.8, threshold: float = DEFAULT_THRESHOLD, floor: float = 0.0
) -> float:
    """Smallest relative slowdown (0.05 = 5%) a paired comparison over `n` blocks calls a regression with
    probability `power`.

    `sigma`: spread of the per-block log-ratios; `level`: the two-sided error level of the interval
    (alpha after multiplicity and looks). Infinite when n blocks can never reach `level`.
    """
    if n < max(2, pairs_needed(level)):
        return math.inf
    return mde_from_se(standard_error(sigma, n), level=level, power=power, threshold=threshold, floor=floor)


def fewest(mde_at: Callable[[int], float], effect: float, lo: int, most: int = 100_000) -> int | None:
    """The fewest n in [lo, most] whose MDE (`mde_at(n)`, falling with n) is at most `effect`; None when none is."""
    if mde_at(most) > effect:
        return None
    hi = most
    while lo < hi:
        mid = (lo + hi) // 2
        if mde_at(mid) <= effect:
            hi = mid
        else:
            lo = mid + 1
    return lo


def blocks_needed(
    sigma: float, effect: float, *, level: float, power: float = 0.8, threshold: float = DEFAULT_THRESHOLD,
    floor: float = 0.0, most: int = 100_000,
) -> int | None:
    """Fewest blocks whose MDE (rank test) is at most `effect` (e.g. 0.05); None when no n up to `most` gets there."""
    if not math.isfinite(sigma) or effect <= threshold:
        return None
    return fewest(lambda n: minimum_detectable_effect(sigma, n, level=level, power=power, threshold=threshold,
                                                      floor=floor), effect, max(2, pairs_needed(level)), most)


def pooled_t_mde(sigma: float, n: int, *, level: float, power: float = 0.8, threshold: float = DEFAULT_THRESHOLD,
                 floor: float = 0.0, prior_df: int = 0) -> float:
    """The MDE of the pooled t (`t_tests.py`) with n processes a side whose log values spread by `sigma`
    (plus `prior_df` degrees of freedom lent by earlier runs)."""
    if n < 2 or not math.isfinite(sigma):
        return math.inf
    se = sigma * math.sqrt(2 / n)
    return mde_from_se(se, level=level, power=power, threshold=threshold, floor=floor, df=2 * n - 2 + prior_df)


def paired_t_mde(sigma_block: float, n: int, *, level: float, power: float = 0.8, threshold: float = DEFAULT_THRESHOLD,
                 floor: float = 0.0) -> float:
    """The MDE of the paired t over n blocks whose log-ratios spread by `sigma_block` (after the metric's floor)."""
    if n < 2 or not math.isfinite(sigma_block):
        return math.inf
    return mde_from_se(sigma_block / math.sqrt(n), level=level, power=power, threshold=threshold, floor=floor,
                       df=n - 1)
