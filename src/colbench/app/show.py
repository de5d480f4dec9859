"""What a store holds, as `colbench show` (and the end of `colbench run`) prints it: the runs, and one run's results
summarised per case with what the view around them needs (the experiments' tables, the machine's bandwidth, the
profiles `run --profile` kept)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from colbench.analysis.aggregate import CaseSummary, summarize_cases
from colbench.model.records import Result, Run
from colbench.model.run_parts import MachineBandwidth
from colbench.store.base import ResultQuery, Store

if TYPE_CHECKING:
    from rich.table import Table


@dataclass(frozen=True)
class RunResults:
    """A run's record and its results, one summary per case (processes pooled), secrets redacted."""

    run: Run
    summaries: list[CaseSummary]


@dataclass(frozen=True)
class KeptProfiles:
    """The profiles `run --profile` kept for a run: how many, of which environments, their bytes and folder."""

    count: int
    envs: list[str]
    size_bytes: int
    folder: Path


def stored_runs(store: Store) -> list[Run]:
    """Every run of the store, newest first, secrets redacted."""
    return [run.redacted() for run in store.list_runs()]


def run_view(store: Store, run_id: str) -> RunResults:
    """The run of this exact id (`stores.run_id_of` resolves a reference) with its results summarised per case."""
    run = store.get_run(run_id).redacted()  # records stored before redaction existed may hold secrets
    return RunResults(run, case_summaries([r.redacted() for r in store.results(ResultQuery(run_ids=(run_id,)))]))


def case_summaries(results: Sequence[Result]) -> list[CaseSummary]:
    """Results summarised one per case and environment (the live view's line for a finished case)."""
    return summarize_cases(results)


def bandwidth_of(run: Run | None) -> MachineBandwidth:
    """The machine's memory bandwidth as the run measured it (E3's calibration), for throughput beside times."""
    return MachineBandwidth() if run is None else MachineBandwidth.of(run)


def experiment_tables(view: RunResults) -> list[Table]:
    """The tables of the reference experiments the run's results cover (measured beside published)."""
    from colbench.experiments.registry import experiment_tables as tables

    return tables(view.summaries, view.run)


def kept_profiles(store: Store, run_id: str) -> KeptProfiles | None:
    """What `run --profile` kept of the run (None: nothing)."""
    from colbench.profiles.stored import run_folder, run_profiles

    kept = run_profiles(store, run_id)
    if not kept:
        return None
    return KeptProfiles(len(kept), sorted({p.env_name for p in kept}), sum(p.size_bytes for p in kept),
                        run_folder(store, run_id))
