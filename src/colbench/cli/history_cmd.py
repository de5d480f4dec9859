"""`colbench history`: a case over time on one machine, with change points."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from colbench.app.history import HistoryOutcome, HistoryRequest, check
from colbench.app.history import history as history_use_case
from colbench.cli.common import FormatOption, StoreOption, UsageError, _store, console, friendly, output_format
from colbench.model.metrics import metric_or_none
from colbench.render.fmt import fmt_bytes, fmt_instructions, fmt_metric
from colbench.render.tables import plain
from colbench.words import plural, ratio_text

if TYPE_CHECKING:  # the record app/history.py returns, for annotations only
    from colbench.app.history import History


def history(
    benchmark: Annotated[str, typer.Argument(help="benchmark name")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=VALUE filter (repeatable)")] = None,
    machine: Annotated[str | None, typer.Option(help="machine name or id (default: this machine)")] = None,
    min_size: Annotated[int, typer.Option(min=2, help="minimum points between change points")] = 5,
    fmt: FormatOption = "table",
    metric: Annotated[str, typer.Option(help="time (wall seconds), instructions, memory (peak RSS), arrow_memory "
                                        "(Arrow pool's peak) or file_size")] = "time",
    by: Annotated[str, typer.Option(help="time (a point per run, in time order) or version (a point per version "
                                    "of --package, in version order)")] = "time",
    package: Annotated[str | None, typer.Option(help="with --by version: the library whose versions are the "
                                                "x axis (pyarrow, or java:arrow)")] = None,
    store: StoreOption = None,
) -> None:
    """A case's results over time (commits, versions or dates), or over a library's versions in version order
    (`--by version --package pyarrow`), with change points (e-divisive means)."""

    @friendly
    def body() -> None:
        filters = {}
        for option in param or []:
            name, sep, value = option.partition("=")
            if not sep:
                raise UsageError(f"--param {option!r}: write NAME=VALUE")
            filters[name] = value
        request = HistoryRequest(benchmark, filters, machine, min_size, metric, by, package)
        check(request)  # bad options before the store is opened
        found = history_use_case(_store(store, create=False), request)
        if fmt == "json":
            watched = [r.to_json() for r in found.watched]
            typer.echo(json.dumps([{**h.to_dict(), **({"watched": watched} if package else {})}
                                   for h in found.histories], indent=2, default=str))
            return
        with output_format(fmt):
            _print_tables(found, metric, package)
            if found.watched:
                _print_watched(found, package or "")

    body()


def _print_tables(found: HistoryOutcome, metric: str, package: str | None) -> None:
    for h in found.histories:
        show = (lambda v: f"{v * 1e3:.3f} ms") if metric == "time" else \
            (lambda v: fmt_instructions(v) + " instr") if metric == "instructions" else \
            fmt_bytes if getattr(metric_or_none(metric), "unit", None) == "B" else \
            functools.partial(_own_unit, metric=metric, unit=h.unit)  # an asv track_ benchmark's own unit
        console.print(_history_table(h, show, package))
        _print_notes(h, package)


def _own_unit(value: float, metric: str, unit: str) -> str:
    return fmt_metric(value, metric, unit=unit)


def _history_table(h: History, show: Callable[[float], str], package: str | None) -> Table:
    """A history's points: when (or which version), Python, the ratio to the reference and at its level, the raw
    median, the processes, and the change points."""
    over = f" over {package} versions" if package else ""
    case = h.label.removesuffix(f" [{h.env_name}]")
    env = f", environment {h.env_name}," if h.env_name != "default" else ""
    # plain: labels, machine and environment names come from the store ("[old]" is not Rich markup)
    table = Table(title=plain(f"{case}{env}{over} on {h.machine_name} ({h.machine_id}): "
                              f"{plural(len(h.points), 'version' if package else 'point')}"))
    first = ("first measured", f"{package} version") if package else ("when", "commit / version")
    level = h.reference_median
    for column in (*first, "python", f"ratio to {h.reference} (99% interval)", f"at {h.reference}'s level",
                   "raw median", "processes", "change"):
        table.add_column(column)
    changes = {cp.index: cp for cp in h.change_points}
    pythons = set(h.python_changes)
    for i, point in enumerate(h.points):
        cp = changes.get(i)
        mark = f"[bold]{cp.magnitude:+.1%}[/bold] (p={cp.p_value:.3f})" if cp else ""
        python = ".".join(point.interpreter.split(".")[:2])
        python = f"[bold]→ {python}[/bold]" if i in pythons else python
        if point.ratio is not None and point.low is not None and point.high is not None:
            unbounded = point.low <= 0 and point.high == float("inf")
            ratio = (f"{point.ratio:.3f} (no interval from {plural(point.processes, 'process')})" if unbounded
                     else f"{point.ratio:.3f} [{ratio_text(point.low)}, {ratio_text(point.high)}]")
            scaled = show(point.ratio * level) if level else "-"
        else:
            ratio, scaled = "incomparable", "-"
        table.add_row(point.when[:19], plain(point.label), python, ratio, scaled,
                      f"{show(point.median)} ±{point.cv:.0%}" if point.cv == point.cv else show(point.median),
                      f"{point.processes} ({point.runs} run{'s' if point.runs != 1 else ''})", mark)
    return table


def _print_notes(h: History, package: str | None) -> None:
    """Under a history's table: its notes, where Python changes, and its change points."""
    for note in (h.calibration, h.note):
        if note:
            console.print(plain(note), highlight=False, soft_wrap=True)
    for i in h.python_changes:
        console.print(f"Python changes at {plain(h.points[i].label)}: {h.points[i - 1].interpreter} → "
                      f"{h.points[i].interpreter} (a step there may be Python's, not {package or 'the code'}'s)",
                      highlight=False)
    if not h.change_points:
        console.print("no change point")
    for cp in h.change_points:
        console.print(f"change point at {plain(h.points[cp.index].label)} ({h.points[cp.index].when[:10]}): "
                      f"{cp.magnitude:+.1%} in the ratio to {h.reference}, {cp.before_median:.3f} → "
                      f"{cp.after_median:.3f}, p={cp.p_value:.3f}", highlight=False)


def _print_watched(found: HistoryOutcome, package: str) -> None:
    """The releases `colbench watch` measured: a timeline with each one's verdict, its worst case and its explain."""
    from colbench.report.watch_text import ratio_text

    table = Table(title=f"{package} releases watched on machine {found.machine_id}")
    for column in ("version", "watched", "against", "verdict", "case", "ratio [interval]"):
        table.add_column(column)
    links = []
    styles = {"regression": "red", "improvement": "green", "error": "yellow"}
    for release in found.watched:
        shown = release.regressed[:1] or [c for c in release.cases if c.verdict != "no change"][:1] or \
            list(release.cases[:1])
        case = shown[0] if shown else None
        if case and case.explained and case.explained.flamegraph:
            links.append(f"{release.version}: why {case.label} changed: {case.explained.flamegraph}")
        verdict = release.verdict + (f": {release.cause}" if release.cause else "")
        table.add_row(release.version, release.watched_at[:16].replace("T", " "), release.baseline or "-", verdict,
                      case.label if case else "-", ratio_text(case) if case else "-",
                      style=styles.get(release.verdict, ""))
    console.print(table)
    for link in links:  # whole, never cut by the table's width: a path to open
        console.print(link, highlight=False, soft_wrap=True, markup=False)
