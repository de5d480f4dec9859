"""A published finding, as data: two cases, the relation the post found between them, and its figure.

A claim reads "`faster` beats `slower`" (or, for sizes, "is smaller than"): the ratio slower / faster of the
claim's metric is above `at_least` (1.0: simply ahead; 10: an order of magnitude). colbench measures that ratio
with a confidence interval (colbench.analysis.claims) and says whether the claim holds on this machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ClaimCase:
    """One side of a claim: a benchmark and the params that pick its cases (others are the claim's
    conditions, and must agree between the two sides)."""

    benchmark: str
    params: dict[str, Any] = field(default_factory=dict)
    metric: str = "time"  # a metric of colbench.model.metrics (time, first_run, file_size, input_size, gbps)
    #: a machine figure measured once per run instead of a case (e.g. "memcpy_gbps" of the run's calibration)
    calibration: str | None = None

    def matches(self, benchmark: str, params: dict[str, Any]) -> bool:
        return benchmark == self.benchmark and all(params.get(k) == v for k, v in self.params.items())


@dataclass(frozen=True)
class Claim:
    key: str
    experiment: str
    text: str
    faster: ClaimCase
    slower: ClaimCase
    #: the claim holds when slower / faster is above this (1.0 = ahead at all; 10 = ≫) …
    at_least: float = 1.0
    #: … and, for a claim of likeness ("comparable"), below this
    at_most: float | None = None
    #: slower / faster as published, for the plot of measured vs published
    published: float | None = None
    #: where the published figure comes from, in the post's words
    source: str = ""
    #: params both sides must share beyond their own (besides every param neither side names)
    ignore: tuple[str, ...] = ()

    def swapped(self) -> Claim:
        """The opposite claim (used by tests: a broken relation must read "does not hold")."""
        inverse = 1.0 / self.published if self.published else None
        return Claim(self.key + "-swapped", self.experiment, "swapped: " + self.text, self.slower, self.faster,
                     self.at_least, self.at_most, inverse, self.source, self.ignore)


@dataclass(frozen=True)
class LeastGainClaim:
    """"`least` gains least": the ratio of claim `least` is below the ratio of each claim in `others`."""

    key: str
    experiment: str
    text: str
    least: str
    others: tuple[str, ...]
    source: str = ""


@dataclass(frozen=True)
class Untestable:
    """A claim of a post these benchmarks cannot test here, and why."""

    experiment: str
    text: str
    why: str
