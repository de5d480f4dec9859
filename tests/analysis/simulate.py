"""Seeded benchmark-noise simulator shared by the analysis tests.

Each process gets a random offset (layout, CPU placement: the between-process spread), each iteration
lognormal noise around it, and now and then an interrupted iteration 30 % slower (the skewed tail
real timings have). Blocks can add a common drift to both sides (machine state changing over time).
"""

from __future__ import annotations

import numpy as np

from colbench.analysis.verdicts import CaseInput


def processes(
    rng: np.random.Generator,
    n: int,
    *,
    ratio: float = 1.0,
    iterations: int = 5,
    cv: float = 0.02,
    between: float = 0.01,
    base: float = 0.25,
    outlier_rate: float = 0.05,
    drift: np.ndarray | None = None,
) -> list[list[float]]:
    offsets = rng.normal(0.0, between, n)
    if drift is not None:
        offsets = offsets + drift[:n]
    out = []
    for off in offsets:
        noise = rng.normal(0.0, cv, iterations)
        slow = rng.random(iterations) < outlier_rate
        values = base * ratio * np.exp(off + noise) * np.where(slow, 1.3, 1.0)
        out.append([float(v) for v in values])
    return out


def case(
    rng: np.random.Generator,
    n: int,
    *,
    ratio: float = 1.0,
    paired: bool = False,
    block_drift: float = 0.0,
    metric: str = "time",
    **kw: float,
) -> CaseInput:
    """One A/B case: `n` processes per side (or `n` blocks of one process per side when paired)."""
    drift = rng.normal(0.0, block_drift, n) if block_drift else None
    baseline = processes(rng, n, drift=drift, **kw)
    contender = processes(rng, n, ratio=ratio, drift=drift, **kw)
    blocks = list(range(n)) if paired else None
    return CaseInput(baseline, contender, metric=metric, baseline_blocks=blocks, contender_blocks=blocks)
