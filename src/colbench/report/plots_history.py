"""A case's history on one machine, as the report and the dashboard show it, with its change points.

Pages only see `HistorySeries`: one point per run (or version) and `ChangeMark`s. The points are those of
`colbench history` (`analysis.history`): placed on one scale by comparisons, not by pooling raw times from runs made
at other hours (analysis/chain.py), drawn at the reference point's level (its median times each point's ratio, with
the ratio's interval); a point incomparable to the reference is drawn hollow at its raw median and takes no part in
the change points; a change of interpreter is marked. `find_change_points` is the single place that calls
`colbench.analysis.changepoint` for other series (e-divisive means).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from colbench.analysis.changepoint import detect_change_points
from colbench.analysis.history import History, case_histories, version_histories
from colbench.model.records import Result
from colbench.model.summary import summary_of
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
    median: float  # seconds at the reference's level (its median × the ratio); the raw median when incomparable
    low: float  # the ratio's interval at that level (the raw min of the process medians when incomparable)
    high: float
    processes: int
    #: placed by comparisons on the reference's scale (False: incomparable to it, drawn hollow at its raw median)
    comparable: bool = True
    #: the Python version its workers ran on
    interpreter: str = ""
    #: how it was placed (analysis/chain.py): beside the reference, chained, raw medians, or incomparable
    via: str = ""


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
    #: indices of the points whose interpreter differs from the one before
    python_changes: list[int] = field(default_factory=list)
    #: the point every ratio is relative to, and what the calibration says of raw medians across runs
    reference: str = ""
    note: str = ""

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


def _series(history: History, benchmark: str, label: str, env_name: str) -> HistorySeries:
    """A `colbench history` series as the pages draw it."""
    level = history.reference_median or 1.0
    points = []
    for p in history.points:
        if p.ratio is not None and p.low is not None and p.high is not None:
            points.append(HistoryPoint(p.run_id, p.when, p.label, p.ratio * level, p.low * level, p.high * level,
                                       p.processes, True, p.interpreter, p.via))
        else:
            points.append(HistoryPoint(p.run_id, p.when, p.label, p.median, p.median, p.median, p.processes, False,
                                       p.interpreter, p.via))
    changes = [ChangeMark(c.index, c.magnitude, c.p_value) for c in history.change_points
               if math.isfinite(c.magnitude)]
    unit = "versions" if history.by == "version" else "runs"
    method = (f"e-divisive means over the points' ratios to {history.reference} (measured side by side, chained "
              f"across runs), segments of ≥ {MIN_SEGMENT} {unit}, p ≤ 0.01")
    note = "; ".join(n for n in (history.note, history.calibration) if n)
    return HistorySeries(benchmark, history.case_id, label, history.machine_id, history.machine_name, env_name,
                         points, changes, method, history.metric, history.by, history.package,
                         list(history.python_changes), history.reference, note)


def series_from_results(results: Iterable[Result], label: str, detect: bool = True,
                        metric: str = "time") -> list[HistorySeries]:
    """Ok results of one case, one series per machine and environment, of `metric` ("time" or "instructions"; runs
    that did not measure it are left out): `colbench history`'s points (every environment's results placed
    together, so what a run measured side by side is what the points rest on)."""
    by_machine: dict[str | None, list[Result]] = defaultdict(list)
    for r in results:
        if r.ok:
            by_machine[r.machine_id].append(r)
    out = []
    for machine_id, members in by_machine.items():
        names = {r.run_id: r.run_name or r.run_id[-6:] for r in members}
        benchmark = members[0].benchmark
        specs = {(r.run_id, r.env_name): str(r.env.get("spec") or "") for r in members}
        found = case_histories([summary_of(r) for r in members], str(machine_id), {}, min_size=MIN_SEGMENT,
                               metric=metric, env_specs=specs)
        for history in found:
            env_name = history.points[0].env_name if history.points else "default"
            series = _series(history, benchmark, label, env_name)
            if len({p.version for p in series.points}) == 1 and len(series.points) > 1:  # name the runs instead
                series.points = [replace(p, version=str(names.get(p.run_id, p.run_id))) for p in series.points]
            if not detect:
                series.changes, series.method = [], ""
            out.append(series)
    return out


def version_series_from_results(results: Iterable[Result], label: str, package: str, metric: str = "time",
                                detect: bool = True) -> list[HistorySeries]:
    """Ok results of one case, one series per machine over the versions of `package` they ran with, in version
    order: `colbench history --by version`'s points (a sweep's ratios, a bisect's steps chained to them)."""
    by_machine: dict[str | None, list[Result]] = defaultdict(list)
    for r in results:
        if r.ok:
            by_machine[r.machine_id].append(r)
    out = []
    for machine_id, members in by_machine.items():
        for history in version_histories([summary_of(r) for r in members], str(machine_id), {}, package,
                                         min_size=MIN_SEGMENT, metric=metric):
            series = _series(history, members[0].benchmark, label, "versions")
            if not detect:
                series.changes, series.method = [], ""
            out.append(series)
    return out


@styled
def history_figure(series: HistorySeries, compact: bool = False, small: bool = False) -> Figure | None:
    """Each point at the reference's level with its ratio's interval (incomparable ones hollow, at their raw median);
    change points as dashed lines labelled with the step, the segment means as a grey staircase, a change of Python
    as a dotted line. `compact`: for a grid of a report's histories; `small`: a thumbnail for the dashboard's front
    page (its caption is the page's)."""
    points = series.points
    if not points:
        return None
    compact = compact or small
    counts = series.metric == "instructions"
    scale, unit = count_unit([p.high for p in points]) if counts else time_unit([p.high for p in points])
    width, height = (3.6, 1.35) if small else (5.2, 1.9) if compact else (8.0, 2.8)
    fig, axes = new_figure(1, 1, width=width, panel_height=height)
    ax = axes[0][0]
    ys = [p.median / scale for p in points]
    shown = [i for i, p in enumerate(points) if p.comparable]
    _draw_points(ax, points, ys, shown, scale)
    _draw_python_changes(ax, series)
    _draw_segment_means(ax, series, ys, shown)
    # an interval of a few blocks can span decades: the axis follows the points, and a whisker beyond it is cut
    top = min(max(p.high for p in points), 2.5 * max(p.median for p in points)) / scale
    _draw_change_points(ax, series)
    _label_axes(ax, series, top, unit, compact=compact, small=small)
    if not compact:
        _title(fig, series)
    return fig


def _draw_points(ax: Axes, points: list[HistoryPoint], ys: list[float], shown: list[int], scale: float) -> None:
    """The comparable points with their intervals; the incomparable ones hollow, at their raw median."""
    xs = list(range(len(points)))
    errors = [[(points[i].median - points[i].low) / scale for i in shown],
              [(points[i].high - points[i].median) / scale for i in shown]]
    ax.errorbar([xs[i] for i in shown], [ys[i] for i in shown], yerr=errors, color=PALETTE[0], marker="o",
                markersize=3.5, linewidth=1.2, capsize=2, elinewidth=0.8)
    apart = [i for i, p in enumerate(points) if not p.comparable]
    if apart:
        ax.plot([xs[i] for i in apart], [ys[i] for i in apart], linestyle="none", marker="o", markersize=4,
                markerfacecolor="none", markeredgecolor=LIMIT_COLOR, label="incomparable (raw median)")
        ax.legend(fontsize=6, loc="lower right", frameon=False)


def _draw_python_changes(ax: Axes, series: HistorySeries) -> None:
    for index in series.python_changes:
        ax.axvline(index - 0.5, color=LIMIT_COLOR, linestyle=":", linewidth=1.0)
        python = ".".join(series.points[index].interpreter.split(".")[:2])
        ax.annotate(f"Python {python}", (index - 0.5, 0.02), xycoords=("data", "axes fraction"), xytext=(2, 0),
                    textcoords="offset points", color="#555555", fontsize=6, rotation=90, va="bottom")


def _draw_segment_means(ax: Axes, series: HistorySeries, ys: list[float], shown: list[int]) -> None:
    """The mean of the comparable points between change points: a grey staircase."""
    bounds = [0] + [c.index for c in series.changes] + [len(series.points)]
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        inside = [ys[i] for i in shown if start <= i < end]
        if not inside:
            continue
        level = sum(inside) / len(inside)
        ax.plot([start - 0.4, end - 0.6], [level, level], color=LIMIT_COLOR, linewidth=1, alpha=0.6)


def _draw_change_points(ax: Axes, series: HistorySeries) -> None:
    for change in series.changes:
        ax.axvline(change.index - 0.5, color="#c0392b", linestyle="--", linewidth=1.2)
        ax.annotate(f"{change.magnitude:+.1%}", (change.index - 0.5, 0.99), xycoords=("data", "axes fraction"),
                    xytext=(3, 0), textcoords="offset points", color="#c0392b", fontsize=8, fontweight="bold",
                    va="top")


def _label_axes(ax: Axes, series: HistorySeries, top: float, unit: str, *, compact: bool, small: bool) -> None:
    """Dates and versions (every version when the points are versions) under the points, the measure beside."""
    points = series.points
    xs = list(range(len(points)))
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
    at = f" at {series.reference}'s level" if series.reference and not small else ""
    counts = series.metric == "instructions"
    ax.set_ylabel(f"instructions{at} ({unit})" if counts else f"time{at} ({unit})", fontsize=6 if small else 7)
    if small:
        ax.tick_params(labelsize=6)
    ax.margins(x=0.03)


def _title(fig: Figure, series: HistorySeries) -> None:
    points = series.points
    counts = series.metric == "instructions"
    by_version = series.by == "version"
    last = fmt_measured(points[-1].median, "instructions") if counts else fmt_time(points[-1].median)
    title(fig, f"{series.label} — {series.machine_name}" + (f", {series.env_name}"
                                                              if series.env_name != "default" else ""),
          (f"{plural(len(points), 'version')} of {series.package}" if by_version else plural(len(points), 'run'))
          + f"; last {last}; "
          + (plural(len(series.changes), "change point") if series.changes else "no change point")
          + (f" ({series.method})" if series.method else ""))
