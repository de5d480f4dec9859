"""Descriptive statistics of one set of samples.

These are for *showing* noise (tables, reports, calibration), not for verdicts: a verdict is made in
`compare.py` over processes, never over pooled iterations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

#: Multiply a MAD by this to estimate the standard deviation of normal data.
MAD_TO_SIGMA = 1.482602218505602


@dataclass(frozen=True)
class Summary:
    """Location and spread of a set of samples.

    `stdev` uses ddof=1 and is NaN for n=1 (a single sample says nothing about spread); `cv` is
    stdev/mean. `mad` is the raw median absolute deviation (multiply by `MAD_TO_SIGMA` for a
    robust sigma); `iqr` is q3 - q1 with linear interpolation.
    """

    n: int
    min: float
    max: float
    median: float
    mean: float
    stdev: float
    q1: float
    q3: float
    iqr: float
    cv: float
    mad: float

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def _as_array(samples: Iterable[float]) -> np.ndarray:
    arr = np.asarray(list(samples) if not isinstance(samples, np.ndarray) else samples, dtype=float).ravel()
    if arr.size == 0:
        raise ValueError("cannot summarize an empty set of samples")
    if not np.all(np.isfinite(arr)):
        raise ValueError("samples contain NaN or infinite values")
    return arr


def summarize(samples: Iterable[float]) -> Summary:
    """Summarize samples (n, min, max, median, mean, stdev, quartiles, IQR, CV, MAD)."""
    arr = _as_array(samples)
    n = int(arr.size)
    mean = float(arr.mean())
    median = float(np.median(arr))
    stdev = float(arr.std(ddof=1)) if n > 1 else math.nan
    q1, q3 = (float(q) for q in np.percentile(arr, [25.0, 75.0]))
    cv = stdev / mean if n > 1 and mean != 0 else math.nan
    mad = float(np.median(np.abs(arr - median)))
    return Summary(
        n=n,
        min=float(arr.min()),
        max=float(arr.max()),
        median=median,
        mean=mean,
        stdev=stdev,
        q1=q1,
        q3=q3,
        iqr=q3 - q1,
        cv=cv,
        mad=mad,
    )


def process_locations(processes: Sequence[Sequence[float]]) -> np.ndarray:
    """One robust location (the median of its iterations) per process; empty processes are skipped.

    Iterations inside one process share its memory layout, its CPU placement and its caches, so they
    are correlated; processes are the independent replicates, and inference is done over these
    per-process medians.
    """
    locs = [float(np.median(np.asarray(p, dtype=float))) for p in processes if len(p) > 0]
    arr = np.asarray(locs, dtype=float)
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError("samples contain NaN or infinite values")
    return arr


def within_process_cv(processes: Sequence[Sequence[float]]) -> float:
    """Median over processes of the iteration-level CV (NaN when no process has 2+ iterations)."""
    cvs = []
    for p in processes:
        arr = np.asarray(p, dtype=float)
        if arr.size > 1 and arr.mean() != 0:
            cvs.append(float(arr.std(ddof=1) / arr.mean()))
    return float(np.median(cvs)) if cvs else math.nan


def robust_sigma(values: Sequence[float] | np.ndarray) -> float:
    """Robust standard deviation: MAD-based, so one odd process does not inflate it; the ordinary stdev when
    more than half the values are equal (MAD = 0)."""
    array = np.asarray(values, dtype=float)
    if array.size < 2:
        return math.nan
    mad = float(np.median(np.abs(array - np.median(array)))) * MAD_TO_SIGMA
    return mad if mad > 0 else float(array.std(ddof=1))


def robust_log_sigma(values: Sequence[float] | np.ndarray) -> float:
    """Robust standard deviation of log(values). On the log scale a sigma is a relative spread (0.02 ~ 2 %),
    which is what thresholds are in."""
    return robust_sigma(np.log(np.asarray(values, dtype=float)))


def summary_stats(values: Sequence[float | None]) -> dict[str, float | int | None]:
    """The stored summary of a sample (see the schema); JSON has no NaN, so undefined spread is null."""
    clean = [v for v in values if v is not None and math.isfinite(v)]
    if not clean:
        return {"n": 0, "min": None, "median": None, "mean": None, "stdev": None, "iqr": None, "cv": None}
    summary = summarize(clean).to_dict()
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in summary.items()}


def qn_sigma(values: Sequence[float] | np.ndarray) -> float:
    """Rousseeuw–Croux Qn estimate of the standard deviation; NaN below 2 values.

    Qn is the first quartile of the pairwise distances |x_i - x_j|, scaled to the standard deviation
    under normal noise (with the small-sample correction). Unlike the MAD (37% efficient, so a spread
    from 20 blocks easily comes out half the truth) it is 82% efficient, and like the MAD it ignores up
    to half the values being wild. Falls back to the ordinary stdev when more than half the values tie.
    """
    arr = np.sort(np.asarray(values, dtype=float))
    n = arr.size
    if n < 2:
        return math.nan
    i, j = np.triu_indices(n, k=1)
    distances = np.sort(np.abs(arr[j] - arr[i]))
    h = n // 2 + 1
    k = h * (h - 1) // 2
    qn = 2.2219 * float(distances[min(k, distances.size) - 1])
    small = {2: 0.399, 3: 0.994, 4: 0.512, 5: 0.844, 6: 0.611, 7: 0.857, 8: 0.669, 9: 0.872}
    qn *= small.get(n, n / (n + 1.4) if n % 2 else n / (n + 3.8))
    return qn if qn > 0 else float(arr.std(ddof=1))


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval of a rate (95% by default): honest at 0 of n and n of n, where the normal one is not."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
