"""What a reference experiment is: the post it reproduces, its suites, and where its table and plots live."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from colbench.model.claims import Claim, LeastGainClaim, Untestable
from colbench.model.records import Run
from colbench.model.suite import Suite

if TYPE_CHECKING:
    from rich.table import Table

    from colbench.analysis.aggregate import CaseSummary
    from colbench.render.figures import PlotSpec

TableBuilder = Callable[["Sequence[CaseSummary]", Run], "Table | None"]


@dataclass(frozen=True)
class Experiment:
    """One home per experiment (`colbench.experiments.eN_*`): `suite.py`, `published.py`, `claims.py` (CLAIMS,
    UNTESTABLE), `table.py` (a `build_table(summaries, run)`), and `plots.py` (`SPECS`). Table and plots load only
    when a report asks, so planning a run never imports Rich tables or matplotlib."""

    key: str
    package: str
    title: str
    post: str
    url: str | None
    suites: tuple[Suite, ...]

    def build_table(self, summaries: Sequence[CaseSummary], run: Run) -> Table | None:
        return importlib.import_module(f"{self.package}.table").build_table(summaries, run)

    def plot_specs(self) -> tuple[PlotSpec, ...]:
        return tuple(importlib.import_module(f"{self.package}.plots").SPECS)

    @property
    def _claims_module(self) -> Any:
        return importlib.import_module(f"{self.package}.claims")

    def claims(self) -> tuple[Claim, ...]:
        """The post's findings these benchmarks can test (`claims.py`: CLAIMS)."""
        return tuple(self._claims_module.CLAIMS)

    def compound_claims(self) -> tuple[LeastGainClaim, ...]:
        return tuple(getattr(self._claims_module, "COMPOUND", ()))

    def untestable(self) -> tuple[Untestable, ...]:
        """The post's findings that cannot be tested here, each with the reason (`claims.py`: UNTESTABLE)."""
        return tuple(getattr(self._claims_module, "UNTESTABLE", ()))
