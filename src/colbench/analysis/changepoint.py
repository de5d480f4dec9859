"""Change points in a benchmark's history: e-divisive means, as Apache Otava (ex-Hunter) does it.

Why e-divisive: history is noisy, skewed and occasionally has an outlier run; a z-score against a
rolling window (Conbench's approach) alerts on every outlier and still misses a small step. E-divisive
(Matteson & James 2014) compares *whole segments* with the energy distance, which is sensitive to any
change in distribution, needs no model of the noise and does not care about a lone outlier.

Algorithm (hierarchical, as in Otava and MongoDB's signal-processing-algorithms):

1. For each current segment, score every split point tau that leaves at least `min_size` points on
   both sides with Q(tau) = m*k/(m+k) * E, where E = 2*mean|x_i - y_j|^a - mean|x_i - x_i'|^a -
   mean|y_j - y_j'|^a (the energy distance between the left part x, of size m, and the right part y,
   of size k). Like Otava we take the right part to the segment's end (no inner search over its
   end), which keeps it O(n^2) per pass with 2-D prefix sums.
2. Take the best split over all segments; its significance is a permutation test: shuffle the points
   inside each segment (seeded), recompute the best score, p = (1 + #{perm >= observed}) / (1 + R).
3. If p <= `max_pvalue`, accept the split and repeat; else stop.

Each change point is reported with where it happens (the first index of the new segment), the means
of the segments on either side (bounded by the neighbouring change points), the relative change
(after/before - 1) and its p-value.

Apache Otava's own package pins numpy==2.2.0 exactly and pulls in cloud clients; MongoDB's
signal-processing-algorithms requires numpy < 2. Neither fits colbench's dependencies, hence this
small implementation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class ChangePoint:
    """A change in the series at `index` (first point of the new regime)."""

    index: int
    before_mean: float
    after_mean: float
    magnitude: float  # after_mean / before_mean - 1 (relative change)
    p_value: float
    before_median: float
    after_median: float
    score: float  # e-divisive statistic Q of the accepted split

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


@lru_cache(maxsize=4)
def _lower_mask(n: int) -> np.ndarray:
    """1.0 strictly below the diagonal, 0.0 elsewhere (cached: permutations reuse it)."""
    mask = np.tri(n, n, -1)
    mask.setflags(write=False)
    return mask


def _best_split(x: np.ndarray, min_size: int, exponent: float) -> tuple[int, float]:
    """Best split index (relative to x) and its Q; (-1, -inf) when x is too short to split.

    With D the distance matrix, only two kinds of sums are needed for every split tau at once: the
    full row sums r (-> sum of D over rows < tau, all columns) and the row sums g below the diagonal
    (-> sum of D within the first tau points). Both are one pass over D.
    """
    n = x.size
    if n < 2 * min_size:
        return -1, -math.inf
    dist = np.subtract.outer(x, x)
    np.abs(dist, out=dist)
    if exponent != 1.0:
        np.power(dist, exponent, out=dist)
    row = np.concatenate([[0.0], np.cumsum(dist.sum(axis=1))])  # row[t] = sum of rows < t
    np.multiply(dist, _lower_mask(n), out=dist)
    low = np.concatenate([[0.0], np.cumsum(dist.sum(axis=1))])  # low[t] = sum_{j < i < t} D_ij
    taus = np.arange(min_size, n - min_size + 1)
    m = taus.astype(float)
    k = (n - taus).astype(float)
    within_left = 2 * low[taus]  # ordered pairs inside the left part
    cross = row[taus] - within_left
    within_right = row[n] - 2 * row[taus] + within_left
    energy = 2 * cross / (m * k) - within_left / (m * (m - 1)) - within_right / (k * (k - 1))
    q = m * k / (m + k) * energy
    best = int(np.argmax(q))
    return int(taus[best]), float(q[best])


def _best_over_segments(values: np.ndarray, bounds: Sequence[int], min_size: int, exponent: float) -> tuple[int, float]:
    best_tau, best_q = -1, -math.inf
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        tau, q = _best_split(values[start:end], min_size, exponent)
        if tau >= 0 and q > best_q:
            best_tau, best_q = start + tau, q
    return best_tau, best_q


def detect_change_points(
    values: Sequence[float],
    *,
    min_size: int = 5,
    max_pvalue: float = 0.01,
    permutations: int = 199,
    exponent: float = 1.0,
    seed: int = 0,
    max_change_points: int | None = None,
    min_magnitude: float = 0.0,
) -> list[ChangePoint]:
    """E-divisive means change points of `values` (in time order), sorted by index.

    `min_size` is the minimum segment length on both sides of every change point; `max_pvalue` the
    significance a split needs (permutation test with `permutations` shuffles, seeded by `seed`, so
    the same history always gives the same answer); `exponent` in (0, 2) is the energy-distance power
    (1: the usual choice). `min_magnitude` only filters what is *reported* (|after/before - 1| below it
    is dropped), it does not change the segmentation.
    """
    x = np.asarray(values, dtype=float)
    _check_arguments(x, min_size, max_pvalue, permutations, exponent)
    rng = np.random.default_rng(seed)
    bounds = [0, x.size]
    p_values: dict[int, float] = {}
    scores: dict[int, float] = {}
    while max_change_points is None or len(p_values) < max_change_points:
        tau, q = _best_over_segments(x, bounds, min_size, exponent)
        if tau < 0:
            break
        p = _permutation_p_value(x, bounds, q, rng, permutations=permutations, max_pvalue=max_pvalue,
                                 min_size=min_size, exponent=exponent)
        if p > max_pvalue:
            break
        p_values[tau] = p
        scores[tau] = q
        bounds = sorted([*bounds, tau])
    return _change_points(x, bounds, p_values, scores, min_magnitude)


def _check_arguments(x: np.ndarray, min_size: int, max_pvalue: float, permutations: int, exponent: float) -> None:
    if x.ndim != 1:
        raise ValueError("values must be one-dimensional")
    if not np.all(np.isfinite(x)):
        raise ValueError("values contain NaN or infinite values")
    if min_size < 2:
        raise ValueError("min_size must be >= 2 (a within-segment distance needs two points)")
    if not 0 < exponent < 2:
        raise ValueError("exponent must be in (0, 2)")
    if 1 / (permutations + 1) > max_pvalue:
        raise ValueError(f"{permutations} permutations can never give p <= {max_pvalue}")


def _permutation_p_value(x: np.ndarray, bounds: list[int], q: float, rng: np.random.Generator, *, permutations: int,
                         max_pvalue: float, min_size: int, exponent: float) -> float:
    """How often shuffling within the segments splits as well as `q` (a permutation test's p)."""
    # Stop the permutation loop early once the split cannot reach max_pvalue any more.
    give_up = math.floor(max_pvalue * (permutations + 1))
    exceed = 0
    for _ in range(permutations):
        shuffled = x.copy()
        for start, end in zip(bounds[:-1], bounds[1:], strict=True):
            shuffled[start:end] = rng.permutation(shuffled[start:end])
        _, q_perm = _best_over_segments(shuffled, bounds, min_size, exponent)
        if q_perm >= q:
            exceed += 1
            if exceed >= give_up:
                break
    return (exceed + 1) / (permutations + 1)


def _change_points(x: np.ndarray, bounds: list[int], p_values: dict[int, float], scores: dict[int, float],
                   min_magnitude: float) -> list[ChangePoint]:
    """The segmentation's inner bounds as change points, those below `min_magnitude` left out."""
    out = []
    for i in range(1, len(bounds) - 1):
        start, tau, end = bounds[i - 1], bounds[i], bounds[i + 1]
        before, after = x[start:tau], x[tau:end]
        before_mean, after_mean = float(before.mean()), float(after.mean())
        magnitude = after_mean / before_mean - 1.0 if before_mean != 0 else math.inf
        if abs(magnitude) < min_magnitude:
            continue
        out.append(
            ChangePoint(
                index=tau,
                before_mean=before_mean,
                after_mean=after_mean,
                magnitude=magnitude,
                p_value=p_values[tau],
                before_median=float(np.median(before)),
                after_median=float(np.median(after)),
                score=scores[tau],
            )
        )
    return out
