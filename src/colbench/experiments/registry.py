"""Finds suites and experiments: the built-in ones, then third-party suites from Python entry points.

Third-party packages register suites under the entry-point group `colbench.suites` (a Suite or a list of them).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from rich.text import Text

from colbench.experiments import e1_csv_readers, e2_dsib, e3_ipc_bandwidth, e4_arrow_jl, e5_feather_v2
from colbench.experiments.base import Experiment
from colbench.experiments.suites import GATE, QUICK
from colbench.model.claims import Claim, LeastGainClaim
from colbench.model.records import Run
from colbench.model.suite import Suite
from colbench.redact import printable

if TYPE_CHECKING:
    from rich.table import Table

    from colbench.analysis.aggregate import CaseSummary
    from colbench.render.figures import PlotSpec

EXPERIMENTS: tuple[Experiment, ...] = tuple(home.EXPERIMENT for home in (
    e1_csv_readers, e2_dsib, e3_ipc_bandwidth, e4_arrow_jl, e5_feather_v2))


@cache
def all_suites() -> dict[str, Suite]:
    suites: dict[str, Suite] = {QUICK.name: QUICK, GATE.name: GATE}
    for experiment in EXPERIMENTS:
        suites.update((suite.name, suite) for suite in experiment.suites)
    from importlib.metadata import entry_points

    for ep in entry_points(group="colbench.suites"):
        loaded = ep.load()
        for suite in loaded if isinstance(loaded, list | tuple) else [loaded]:
            suites.setdefault(suite.name, suite)
    return suites


def experiment_tables(summaries: Sequence[CaseSummary], run: Run) -> list[Table]:
    """Each experiment's table, for the experiments the run is of: it ran one of the experiment's suites, or `quick`
    (a small run of every experiment). A run of a benchmark (a comparison of two releases, a bisect's step) whose
    cases happen to be an experiment's gets no reference tables it did not ask for."""
    envs = list(dict.fromkeys(s.env_name for s in summaries))
    if len(envs) <= 1:
        return [t for t in (e.build_table(summaries, run) for e in experiments_of(run)) if t is not None]
    # each side of an --env / --versions run in its own table, named: one table would show one side's figures
    # under no side's name (a row picks one summary per case)
    tables = []
    for experiment in experiments_of(run):
        for env in envs:
            table = experiment.build_table([s for s in summaries if s.env_name == env], run)
            if table is not None:
                table.title = Text(f"{table.title} — environment {printable(env)}")  # a name, not markup
                tables.append(table)
    return tables


def experiments_of(run: Run) -> list[Experiment]:
    targets = set(run.config.targets)
    if QUICK.name in targets:
        return list(EXPERIMENTS)
    return [e for e in EXPERIMENTS if any(suite.name in targets for suite in e.suites)]


def plot_specs() -> tuple[PlotSpec, ...]:
    return tuple(sorted((spec for e in EXPERIMENTS for spec in e.plot_specs()), key=lambda spec: spec.key))


def experiment_of_suite(name: str) -> Experiment | None:
    return next((e for e in EXPERIMENTS if any(s.name == name for s in e.suites)), None)


def all_claims() -> tuple[Claim, ...]:
    return tuple(c for e in EXPERIMENTS for c in e.claims())


def all_compound_claims() -> tuple[LeastGainClaim, ...]:
    return tuple(c for e in EXPERIMENTS for c in e.compound_claims())
