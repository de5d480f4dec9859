"""`colbench history`: a case over time on one machine, with change points."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from colbench.cli.common import StoreOption, UsageError, _store, console, friendly
from colbench.model.params import did_you_mean
from colbench.redact import clip


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
    from colbench.analysis.history import case_histories, version_histories
    from colbench.machine.facts import machine_info
    from colbench.model.metrics import SERIES_METRICS
    from colbench.render.fmt import fmt_instructions
    from colbench.store.selection import history_results, pick_machine

    @friendly
    def body() -> None:
        filters = {}
        for option in param or []:
            name, sep, value = option.partition("=")
            if not sep:
                raise UsageError(f"--param {option!r}: write NAME=VALUE")
            filters[name] = value
        if metric not in SERIES_METRICS:
            raise UsageError(f"--metric {clip(repr(metric))}: choose {' or '.join(SERIES_METRICS)}"
                             f"{did_you_mean(metric, SERIES_METRICS)}")
        if by not in ("time", "version"):
            raise UsageError(f"--by {clip(repr(by))}: choose time or version{did_you_mean(by, ('time', 'version'))}")
        if (by == "version") != bool(package):
            raise UsageError("--by version needs --package NAME (the library whose versions are the x axis), and "
                             "--package only goes with --by version")
        db = _store(store, create=False)
        machine_id = pick_machine(db, benchmark, machine, here=machine_info()["machine_id"])
        found = history_results(db, benchmark, machine_id)
        if package:
            histories = version_histories(found, machine_id, filters, package, min_size=min_size, metric=metric)
        else:
            histories = case_histories(found, machine_id, filters, min_size=min_size, metric=metric)
        if not histories:
            measured = "" if metric == "time" else f" with {metric} measured (`run --measure {metric}`)"
            ran = f" and ran with a version of {package}" if package else ""
            raise UsageError(f"no successful results of {benchmark} on machine {machine_id} match those "
                             f"params{ran}{measured}")
        show = (lambda v: f"{v * 1e3:.3f} ms") if metric == "time" else (lambda v: fmt_instructions(v) + " instr")
        digits = 1 if metric == "time" else 3  # instruction counts repeat to hundredths of a percent
        if fmt == "json":
            typer.echo(json.dumps([h.to_dict() for h in histories], indent=2, default=str))
            return
        for h in histories:
            over = f" over {package} versions" if package else ""
            table = Table(title=f"{h.label}{over} on {h.machine_name} ({h.machine_id}): {len(h.points)} points")
            first = ("first measured", f"{package} version") if package else ("when", "commit / version")
            for column in (*first, "median", "spread (CV)", "processes", "change"):
                table.add_column(column)
            changes = {cp.index: cp for cp in h.change_points}
            for i, point in enumerate(h.points):
                cp = changes.get(i)
                mark = f"[bold]{cp.magnitude:+.1%}[/bold] (p={cp.p_value:.3f})" if cp else ""
                table.add_row(point.when[:19], point.label, show(point.median), f"±{point.cv:.{digits}%}"
                              if point.cv == point.cv else "-", str(point.processes), mark)
            console.print(table)
            if not h.change_points:
                console.print(h.note or "no change point")
            for cp in h.change_points:
                console.print(f"change point at {h.points[cp.index].label} ({h.points[cp.index].when[:10]}): "
                              f"{cp.magnitude:+.1%}, median {show(cp.before_median)} → "
                              f"{show(cp.after_median)}, p={cp.p_value:.3f}")

    body()
