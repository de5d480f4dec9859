"""`colbench history` as a use case: one machine's series of a case's metric, a point per run (and environment) in
time order, or a point per version of a library in version order, with the change points found in it
(`analysis.history`; e-divisive means). The CLI draws the series; this module finds, checks and computes them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from colbench.app.errors import UsageError
from colbench.model.metrics import HISTORY_METRICS
from colbench.model.params import did_you_mean
from colbench.redact import clip

if TYPE_CHECKING:
    from colbench.analysis.history import History
    from colbench.model.watch import WatchedRelease
    from colbench.store.base import Store

BY = ("time", "version")


@dataclass(frozen=True)
class HistoryRequest:
    """A benchmark's cases whose params match `filters` (NAME → VALUE), on `machine` (a name or id; None: this
    machine). `by="version"` orders the points by the versions of `package` (pyarrow, or java:arrow)."""

    benchmark: str
    filters: Mapping[str, str] = field(default_factory=dict)
    machine: str | None = None
    min_size: int = 5  # the fewest points between change points
    metric: str = "time"
    by: str = "time"  # or "version"
    package: str | None = None


@dataclass(frozen=True)
class HistoryOutcome:
    """One series per matching case (and environment), each with its points and change points."""

    machine_id: str
    histories: list[History]
    #: `--by version`: the releases of the package `colbench watch` watched on this machine, oldest version first
    watched: list[WatchedRelease] = field(default_factory=list)


def check(request: HistoryRequest) -> None:
    """Refuse what cannot make a series, before the store is read."""
    if request.metric not in HISTORY_METRICS:
        raise UsageError(f"--metric {clip(repr(request.metric))}: choose {', '.join(HISTORY_METRICS)}"
                         f"{did_you_mean(request.metric, HISTORY_METRICS)}")
    if request.by not in BY:
        raise UsageError(f"--by {clip(repr(request.by))}: choose time or version{did_you_mean(request.by, BY)}")
    if (request.by == "version") != bool(request.package):
        raise UsageError("--by version needs --package NAME (the library whose versions are the x axis), and "
                         "--package only goes with --by version")


def history(store: Store, request: HistoryRequest) -> HistoryOutcome:
    """The series of the request's cases; a UsageError when no successful result matches."""
    from colbench.analysis.history import case_histories, version_histories  # the statistics (scipy): when used
    from colbench.machine.facts import machine_info
    from colbench.store.selection import history_results, pick_machine

    check(request)
    benchmark, filters, package = request.benchmark, dict(request.filters), request.package
    machine_id = pick_machine(store, benchmark, request.machine, here=machine_info()["machine_id"])
    found = history_results(store, benchmark, machine_id, request.metric)
    if package:
        histories = version_histories(found, machine_id, filters, package, min_size=request.min_size,
                                      metric=request.metric)
    else:
        specs = {(run.run_id, env.name): env.spec or ""
                 for run in store.list_runs() if run.run_id in {r.run_id for r in found} for env in run.envs}
        histories = case_histories(found, machine_id, filters, min_size=request.min_size, metric=request.metric,
                                   env_specs=specs)
    _own_units(store, histories, request.metric, machine_id)
    if not histories:
        measured = "" if request.metric == "time" else \
            " with instructions measured (`run --measure instructions`)" if request.metric == "instructions" else \
            f" with {request.metric} recorded"
        ran = f" and ran with a version of {package}" if package else ""
        raise UsageError(f"no successful results of {benchmark} on machine {machine_id} match those "
                         f"params{ran}{measured}")
    return HistoryOutcome(machine_id, histories, watched_releases(store, package, machine_id) if package else [])


def _own_units(store: Store, histories: list[History], metric_name: str, machine_id: str) -> None:
    """Each history's unit when its metric has none of its own (an asv `track_*`'s `unit`, which the worker records
    in `Result.units`, not in the summaries the history is made of): from one of its results."""
    from colbench.model.metrics import metric_or_none
    from colbench.store.base import ResultQuery

    known = metric_or_none(metric_name)
    if known is None or known.unit:
        return
    for h in histories:
        found = store.results(ResultQuery(case_id=h.case_id, machine_id=machine_id, status="ok"))
        h.unit = next((r.units[metric_name] for r in found if r.units.get(metric_name)), "")


def watched_releases(store: Store, package: str, machine_id: str) -> list[WatchedRelease]:
    """The releases of `package` watch recorded on one machine (every watch), in version order (a watch records
    only versions the index listed, so every one parses)."""
    from packaging.version import Version

    from colbench.store.queries import WatchQuery

    found = store.watched(WatchQuery(package=package, machine_id=machine_id))
    return sorted(found, key=lambda r: (Version(r.version), r.watched_at))
