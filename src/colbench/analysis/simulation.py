"""A seeded model of benchmark noise, to check decision rules before trusting them on a real machine.

Per block, one process per side runs `iterations` timed iterations. On the log scale a time is

    log t = log base + log ratio (contender only) + drift[block] + process offset + iteration noise

- drift: the machine's state in that block, shared by both sides (pairing cancels it);
- process offset: normal with sd `between` (memory layout, CPU placement: what makes processes differ),
  and with probability `odd_process_rate` an extra `odd_process_size` (a process that landed badly);
- iteration noise: normal with sd `within`, and with probability `outlier_rate` an iteration
  `outlier_size` slower (an interrupt, a page fault storm, another job taking the CPU).

So times are log-normal with a heavy right tail, and the between-process CV is about `between`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from colbench.analysis.sequential import FIRST_LOOK_FRACTION, SequentialCompare, Spending, plan_next_look
from colbench.analysis.verdicts import CaseComparison, CaseInput
from colbench.model.metrics import DEFAULT_THRESHOLD


@dataclass(frozen=True)
class NoiseModel:
    between: float = 0.03
    within: float = 0.02
    outlier_rate: float = 0.05
    outlier_size: float = 0.3
    odd_process_rate: float = 0.02
    odd_process_size: float = 0.2
    drift: float = 0.02
    base_s: float = 0.25

    def describe(self) -> str:
        return (f"between-process {self.between:.1%}, iterations {self.within:.1%}, "
                f"{self.outlier_rate:.0%} outlier iterations +{self.outlier_size:.0%}, "
                f"{self.odd_process_rate:.0%} odd processes +{self.odd_process_size:.0%}, drift {self.drift:.1%}")


def _process(rng: np.random.Generator, model: NoiseModel, ratio: float, shift: float, iterations: int) -> list[float]:
    offset = rng.normal(0.0, model.between) + shift
    if rng.random() < model.odd_process_rate:
        offset += np.log1p(model.odd_process_size)
    noise = rng.normal(0.0, model.within, iterations)
    slow = rng.random(iterations) < model.outlier_rate
    logs = np.log(model.base_s * ratio) + offset + noise + np.where(slow, np.log1p(model.outlier_size), 0.0)
    return [float(v) for v in np.exp(logs)]


def blocks(
    rng: np.random.Generator, model: NoiseModel, n: int, *, ratio: float = 1.0, iterations: int = 5, first: int = 0
) -> tuple[list[list[float]], list[list[float]], list[int]]:
    """`n` blocks (numbered from `first`): baseline processes, contender processes, block indices."""
    base, cont, index = [], [], []
    for b in range(first, first + n):
        drift = rng.normal(0.0, model.drift)
        base.append(_process(rng, model, 1.0, drift, iterations))
        cont.append(_process(rng, model, ratio, drift, iterations))
        index.append(b)
    return base, cont, index


class GrowingCase:
    """A case whose blocks arrive look by look, as `--until-decided` adds them."""

    def __init__(self, rng: np.random.Generator, model: NoiseModel, ratio: float = 1.0, iterations: int = 5) -> None:
        self.rng, self.model, self.ratio, self.iterations = rng, model, ratio, iterations
        self.baseline: list[list[float]] = []
        self.contender: list[list[float]] = []
        self.blocks: list[int] = []

    def add(self, n: int) -> None:
        b, c, i = blocks(self.rng, self.model, n, ratio=self.ratio, iterations=self.iterations, first=len(self.blocks))
        self.baseline += b
        self.contender += c
        self.blocks += i

    def case_input(self) -> CaseInput:
        return CaseInput(self.baseline, self.contender, baseline_blocks=self.blocks, contender_blocks=self.blocks)


@dataclass(frozen=True)
class SimulatedCase:
    """One case of a simulated suite: its noise, its true ratio, and what one block of it costs."""

    model: NoiseModel
    ratio: float = 1.0
    seconds_per_block: float = 4.0


@dataclass(frozen=True)
class SessionOutcome:
    comparisons: list[CaseComparison]
    looks: int
    seconds: float
    blocks: list[int]


def simulate_until_decided(
    rng: np.random.Generator,
    cases: list[SimulatedCase],
    *,
    budget_s: float,
    first_blocks: int = 12,
    alpha: float = 0.01,
    threshold: float = DEFAULT_THRESHOLD,
    floor: float = 0.0,
    spending: Spending = "pocock",
    first_fraction: float = FIRST_LOOK_FRACTION,
    iterations: int = 5,
) -> SessionOutcome:
    """`--until-decided` on simulated cases, with the runner's own look planning and a virtual clock."""
    grown = [GrowingCase(rng, c.model, c.ratio, iterations) for c in cases]
    for g in grown:
        g.add(first_blocks)
    seq: SequentialCompare[int] = SequentialCompare(alpha=alpha, threshold=threshold, floor=floor,
                                                    spending=spending, max_looks=None)
    elapsed = first_blocks * sum(c.seconds_per_block for c in cases)
    fraction = 1.0 if elapsed >= budget_s else min(first_fraction, 1.0)
    results = seq.look({i: g.case_input() for i, g in enumerate(grown)}, fraction=fraction)
    while seq.pending and not seq.exhausted:
        pending = seq.pending
        plan = plan_next_look(elapsed_s=elapsed, budget_s=budget_s,
                              seconds_per_block=sum(cases[i].seconds_per_block for i in pending),
                              blocks_so_far=max(len(grown[i].blocks) for i in pending))
        if plan is None:
            break
        for i in pending:
            grown[i].add(plan.blocks)
        elapsed += plan.seconds
        results = seq.look({i: g.case_input() for i, g in enumerate(grown)},
                           fraction=max(plan.fraction, seq.fraction))
    return SessionOutcome([results[i] for i in range(len(cases))], seq.looks_done, elapsed,
                          [len(g.blocks) for g in grown])
