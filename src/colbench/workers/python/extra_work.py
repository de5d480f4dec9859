"""A known extra amount of CPU work inside the timed region: an honest way to test that verdicts catch it.

`COLBENCH_EXTRA_WORK=2%` (or `0.02`) in a Python worker's environment — e.g. one side of an A/B run,
`--env slow="@current COLBENCH_EXTRA_WORK=2%"` — adds a deterministic busy loop after the benchmark's own
call, inside the timed region of every timed iteration. It is sized once per process, after the first warm-up
iteration: the loop's cost per unit is measured in the metric being recorded (wall seconds, or instructions under
callgrind), then enough units are run to add that fraction of that iteration's cost. So the regression it
injects is real work, of a known size in the metric that has to catch it; the worker's warnings say how many
units it added. It needs at least one warm-up iteration (`--warmup 1`, the default). Under callgrind, where
warm-ups are not counted, it is sized on one extra counted call of the benchmark before the timed iterations.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from colbench.benchmarks.placebo import busy

VAR = "COLBENCH_EXTRA_WORK"


def parse_fraction(text: str) -> float:
    value = float(text.rstrip("%")) / (100 if text.strip().endswith("%") else 1)
    if not 0 <= value <= 10:
        raise ValueError(f"{VAR}={text!r}: give a fraction of the case's cost between 0 and 1000%, e.g. 2%")
    return value


@dataclass
class ExtraWork:
    fraction: float
    units: int | None = None  # None until calibrated: the first warm-up runs without extra work

    @classmethod
    def from_env(cls) -> ExtraWork | None:
        text = os.environ.get(VAR, "").strip()
        return cls(parse_fraction(text)) if text else None

    def calibrate(self, first_cost: float, measure: Callable[[Callable[[], Any]], float], probe_units: int) -> str:
        """Size the loop to `fraction` of `first_cost`, measuring the loop with `measure`; returns a note."""
        unit_cost = measure(lambda: busy(probe_units)) / probe_units
        self.units = round(self.fraction * first_cost / unit_cost) if unit_cost > 0 else 0
        return (f"{VAR}: {self.units} units of busy work (≈{self.fraction:.2%} of the first warm-up iteration) "
                "added inside every timed iteration")

    def run(self) -> None:
        if self.units:
            busy(self.units)
