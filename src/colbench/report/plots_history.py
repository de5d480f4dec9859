"""A case's history on one machine, as the report and the dashboard show it, with its change points.

Pages only see `HistorySeries`: one point per run (median of the per-process medians, their min–max as the
spread) and `ChangeMark`s. `find_change_points` is the single place that calls
`colbench.analysis.changepoint` (e-divisive means); without that module a series simply has no marks.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from statistics import median as _median

from matplotlib.figure import Figure

from colbench.analysis.changepoint import detect_change_points
from colbench.model.metrics import series_of
from colbench.model.records import Result
from colbench.render.figures import (
    LIMIT_COLOR,
    PALETTE,
    count_unit,
    fmt_time,
    new_figure,
    styled,
    time_unit,
    title,
)
from colbench.render.fmt import fmt_measured
from colbench.words import plural

MIN_RUNS = 3  # a history worth showing has at least this many runs of the case on the machine
MIN_SEGMENT = 5  # as `colbench history`: a change point needs this many runs on both sides


@dataclass(frozen=True)
class HistoryPoint:
    run_id: str
    timestamp: str  # ISO 8601, when the run's first process of the case started
    version: str  # what changed between points: commit, else the engine's version, else the run id
    median: float  # seconds: median of the run's per-process medians
    low: float  # min of the per-process medians
    high: float  # max of the per-process medians
    processes: int


@dataclass(frozen=True)
class ChangeMark:
    index: int  # the first point of the new level
    magnitude: float  # after / before − 1 (of the segment means)
    p_value: float | None = None


@dataclass
class HistorySeries:
    benchmark: str
    case_id: str
    label: str
    machine_id: str | None
    machine_name: str
    env_name: str
    points: list[HistoryPoint]
    changes: list[ChangeMark] = field(default_factory=list)
    method: str = ""
    metric: str = "time"  # a per-iteration metric of colbench.model.metrics
    #: "time": a point per run, in time order; "version": a point per version of `package`, in version order
    by: str = "time"
    package: str = ""

    @property
    def biggest_change(self) -> float:
        return max((abs(c.magnitude) for c in self.changes), default=0.0)


def find_change_points(values: Sequence[float], min_size: int = MIN_SEGMENT) -> tuple[list[ChangeMark], str]:
    """THE adapter to `colbench.analysis.changepoint.detect_change_points`: marks, and how they were found.

    Same settings as `colbench history` (segments of at least 5 runs, p ≤ 0.01, seed 0), so the report, the
    dashboard and the CLI agree on every history.
    """
    if len(values) < 2 * min_size:
        return [], f"change points need at least {2 * min_size} runs"
    try:
        found = detect_change_points(values, min_size=min_size, seed=0)
    except ValueError as exc:
        return [], f"no change-point detection: {exc}"
    marks = [ChangeMark(c.index, c.magnitude, c.p_value) for c in found if math.isfinite(c.magnitude)]
    return marks, f"e-divisive means, segments of ≥ {min_size} runs, p ≤ 0.01"


def _version(result: Result) -> str:
    sha = result.commit_sha
    if sha:
        return str(sha)[:10]
    versions = result.versions
    engine = str(result.engine or "")
    for name in (engine, engine.split("-")[0], "pyarrow"):
        if name and versions.get(name):
            return f"{name} {versions[name]}"
    return result.run_id


def series_from_results(results: Iterable[Result], label: str, detect: bool = True,
                        metric: str = "time") -> list[HistorySeries]:
    """Group ok results of one case by (machine, environment) and run: one series per machine/environment, of
    `metric` ("time" or "instructions"; runs that did not measure it are left out)."""
    key = series_of(metric)
    groups: dict[tuple[str | None, str], dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.ok:
            groups[(r.machine_id, r.env_name)][r.run_id].append(r)
    out = []
    for (machine_id, env_name), runs in groups.items():
        points = []
        for run_id, members in runs.items():
            medians = [m for r in members if (m := r.median(key)) is not None]
            if not medians:
                continue
            first = min(members, key=lambda r: str(r.timestamp))
            points.append(HistoryPoint(run_id, str(first.timestamp), _version(first), _median(medians),
                                       min(medians), max(medians), len(medians)))
        if not points:
            continue
        points.sort(key=lambda p: (p.timestamp, p.run_id))
        if len({p.version for p in points}) == 1 and len(points) > 1:  # nothing told apart: name the runs instead
            names = {r.run_id: r.run_name or r.run_id[-6:] for members in runs.values() for r in members}
            points = [replace(p, version=str(names[p.run_id])) for p in points]
        any_result = next(iter(next(iter(runs.values()))))
        changes, method = find_change_points([p.median for p in points]) if detect else ([], "")
        out.append(HistorySeries(any_result.benchmark, any_result.case_id, label, machine_id,
                                 any_result.machine_name or str(machine_id), env_name, points, changes, method,
                                 metric))
    return out


def version_series_from_results(results: Iterable[Result], label: str, package: str, metric: str = "time",
                                detect: bool = True) -> list[HistorySeries]:
    """Ok results of one case, one series per machine over the versions of `package` they ran with, in version
    order: every process of a version is pooled into its point (the steps of a bisect, a sweep of environments)."""
    from colbench.analysis.history import package_key, version_order

    key, name = series_of(metric), package_key(package)
    groups: dict[str | None, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        version = r.versions.get(name)
        if r.ok and version:
            groups[r.machine_id][str(version)].append(r)
    out = []
    for machine_id, versions in groups.items():
        points = []
        for version in sorted(versions, key=version_order):
            members = versions[version]
            medians = [m for r in members if (m := r.median(key)) is not None]
            if medians:
                first = min(members, key=lambda r: str(r.timestamp))
                points.append(HistoryPoint(first.run_id, str(first.timestamp), version,
                                           _median(medians), min(medians), max(medians), len(medians)))
        if not points:
            continue
        any_result = next(iter(next(iter(versions.values()))))
        changes, method = find_change_points([p.median for p in points]) if detect else ([], "")
        out.append(HistorySeries(any_result.benchmark, any_result.case_id, label, machine_id,
                                 any_result.machine_name or str(machine_id), "versions",
                                 points, changes, method.replace("runs", "versions"), metric, "version", package))
    return out


@styled
def history_figure(series: HistorySeries, compact: bool = False, small: bool = False) -> Figure | None:
    """Median per run with its min–max spread; change points as dashed lines labelled with the step, the
    segment means as a grey staircase. `compact`: for a grid of a report's histories; `small`: a thumbnail for
    the dashboard's front page (its caption is the page's)."""
    points = series.points
    if not points:
        return None
    compact = compact or small
    counts = series.metric == "instructions"
    scale, unit = count_unit([p.high for p in points]) if counts else time_unit([p.high for p in points])
    width, height = (3.6, 1.35) if small else (5.2, 1.9) if compact else (8.0, 2.8)
    fig, axes = new_figure(1, 1, width=width, panel_height=height)
    ax = axes[0][0]
    xs = list(range(len(points)))
    ys = [p.median / scale for p in points]
    errors = [[(p.median - p.low) / scale for p in points], [(p.high - p.median) / scale for p in points]]
    ax.errorbar(xs, ys, yerr=errors, color=PALETTE[0], marker="o", markersize=3.5, linewidth=1.2, capsize=2,
                elinewidth=0.8)
    bounds = [0] + [c.index for c in series.changes] + [len(points)]
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        level = sum(ys[start:end]) / max(end - start, 1)
        ax.plot([start - 0.4, end - 0.6], [level, level], color=LIMIT_COLOR, linewidth=1, alpha=0.6)
    top = max(p.high for p in points) / scale
    for change in series.changes:
        ax.axvline(change.index - 0.5, color="#c0392b", linestyle="--", linewidth=1.2)
        ax.annotate(f"{change.magnitude:+.1%}", (change.index - 0.5, 0.99), xycoords=("data", "axes fraction"),
                    xytext=(3, 0), textcoords="offset points", color="#c0392b", fontsize=8, fontweight="bold",
                    va="top")
    step = max(1, math.ceil(len(points) / (3 if small else 5 if compact else 9)))
    by_version = series.by == "version"
    if by_version:  # versions are what tells the points apart: every one is labelled
        step = 1
    ax.set_xticks(xs[::step], [p.version if by_version else f"{p.timestamp[:10]}\n{p.version}"
                               for p in points[::step]], fontsize=6 if compact else 7,
                  rotation=60 if by_version and len(points) > 8 else 0)
    if by_version:
        ax.set_xlabel(f"{series.package} version (version order)", fontsize=7)
    ax.set_ylim(bottom=0, top=top * 1.25)
    ax.set_ylabel(f"instructions ({unit})" if counts and small else f"median instructions ({unit})" if counts
                  else f"time ({unit})" if small else f"median time ({unit})", fontsize=7 if small else None)
    if small:
        ax.tick_params(labelsize=6)
    ax.margins(x=0.03)
    if not compact:
        last = fmt_measured(points[-1].median, "instructions") if counts else fmt_time(points[-1].median)
        title(fig, f"{series.label} — {series.machine_name}" + (f", {series.env_name}"
                                                                  if series.env_name != "default" else ""),
              (f"{plural(len(points), 'version')} of {series.package}" if by_version else plural(len(points), 'run'))
              + f"; last {last}; "
              + (plural(len(series.changes), "change point") if series.changes else "no change point")
              + (f" ({series.method})" if series.method else ""))
    return fig
