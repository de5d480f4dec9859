"""`colbench history`: a case over time on one machine, with change points."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from colbench.app.history import HistoryOutcome, HistoryRequest, check
from colbench.app.history import history as history_use_case
from colbench.cli.common import StoreOption, UsageError, _store, console, friendly
from colbench.render.fmt import fmt_instructions
from colbench.render.tables import plain
from colbench.words import plural


def history(
    benchmark: Annotated[str, typer.Argument(help="benchmark name")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=VALUE filter (repeatable)")] = None,
    machine: Annotated[str | None, typer.Option(help="machine name or id (default: this machine)")] = None,
    min_size: Annotated[int, typer.Option(min=2, help="minimum points between change points")] = 5,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json")] = "table",
    metric: Annotated[str, typer.Option(help="time (wall seconds) or instructions")] = "time",
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
            typer.echo(json.dumps([h.to_dict() for h in found.histories], indent=2, default=str))
            return
        _print_tables(found, metric, package)

    body()


def _print_tables(found: HistoryOutcome, metric: str, package: str | None) -> None:
    show = (lambda v: f"{v * 1e3:.3f} ms") if metric == "time" else (lambda v: fmt_instructions(v) + " instr")
    digits = 1 if metric == "time" else 3  # instruction counts repeat to hundredths of a percent
    for h in found.histories:
        over = f" over {package} versions" if package else ""
        case = h.label.removesuffix(f" [{h.env_name}]")
        env = f", environment {h.env_name}," if h.env_name != "default" else ""
        # plain: labels, machine and environment names come from the store ("[old]" is not Rich markup)
        table = Table(title=plain(f"{case}{env}{over} on {h.machine_name} ({h.machine_id}): "
                                  f"{plural(len(h.points), 'version' if package else 'point')}"))
        first = ("first measured", f"{package} version") if package else ("when", "commit / version")
        for column in (*first, "median", "spread (CV)", "processes", "change"):
            table.add_column(column)
        changes = {cp.index: cp for cp in h.change_points}
        for i, point in enumerate(h.points):
            cp = changes.get(i)
            mark = f"[bold]{cp.magnitude:+.1%}[/bold] (p={cp.p_value:.3f})" if cp else ""
            table.add_row(point.when[:19], plain(point.label), show(point.median), f"±{point.cv:.{digits}%}"
                          if point.cv == point.cv else "-", str(point.processes), mark)
        console.print(table)
        if not h.change_points:
            console.print(plain(h.note or "no change point"))
        for cp in h.change_points:
            console.print(plain(f"change point at {h.points[cp.index].label} ({h.points[cp.index].when[:10]}): "
                                f"{cp.magnitude:+.1%}, median {show(cp.before_median)} → "
                                f"{show(cp.after_median)}, p={cp.p_value:.3f}"))
