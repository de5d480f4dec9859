"""`colbench show`, `export`, `list` and `machine`: what is stored, what can run, where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from colbench.cli.common import (
    FORMAT_HELP,
    BenchOption,
    FormatOption,
    StoreOption,
    UsageError,
    _store,
    console,
    friendly,
    output_format,
    show_run,
)
from colbench.render.tables import plain
from colbench.report.terminal import render_rows
from colbench.words import plural


@friendly
def show(
    run_id: Annotated[str, typer.Argument(help="run id, a prefix, a run name, or 'latest'")] = "latest",
    fmt: Annotated[Literal["table", "markdown", "json", "csv"], typer.Option(
        "--format", "-f", help=f"{FORMAT_HELP}, or csv (the rows)")] = "table",
    store: StoreOption = None,
    runs: Annotated[bool, typer.Option("--runs", help="list the runs in the store instead")] = False,
    errors: Annotated[bool, typer.Option("--errors", help="each failed case's error: message, traceback and the "
                                         "worker's last stderr lines (table or json)")] = False,
) -> None:
    """Show a run's results, one row per case (processes pooled), or list the runs."""
    db = _store(store, create=False)
    if runs:
        _show_runs(db, fmt)
        return
    if errors and fmt == "csv":
        raise UsageError("--errors --format csv: choose table, markdown or json")
    from colbench.app.stores import run_id_of

    with output_format(fmt):
        show_run(db, run_id_of(db, run_id), fmt, errors=errors)


def _show_runs(db: Any, fmt: str) -> None:
    from colbench.app.show import stored_runs

    rows: list[dict[str, Any]] = [{"run_id": r.run_id, "name": r.name, "started_at": r.started_at,
                                   "status": r.status, "cases": r.cases, "machine": r.machine["name"]}
                                  for r in stored_runs(db)]
    if fmt != "table":
        typer.echo(render_rows(rows, fmt))
        return
    table = Table(title=plain(f"runs in {db.url}"))
    for column in ("run id", "name", "started", "status", "cases", "machine"):
        table.add_column(column)
    for r in rows:
        table.add_row(plain(r["run_id"]), plain(r["name"]), plain(r["started_at"][:19]), plain(r["status"]),
                      str(r["cases"] or ""), plain(r["machine"]))
    console.print(table)


@friendly
def export(
    run_ids: Annotated[list[str] | None, typer.Argument(help="runs to export (default: all)")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="parquet, csv, jsonl or conbench")] = "parquet",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="file to write (default: "
                                                "colbench-results.parquet, .csv, .jsonl or .json by --format)")] = None,
    store: StoreOption = None,
) -> None:
    """Export results (raw samples included) for other tools."""
    from colbench.app.export import check_export
    from colbench.app.export import export as export_use_case

    output = check_export(fmt, output)
    count = export_use_case(_store(store, create=False), run_ids or (), fmt, output)
    console.print(f"wrote {plural(count, 'row')} to {output}")


@friendly
def list_benchmarks(
    targets: Annotated[list[str] | None, typer.Argument(help="an asv suite folder or pytest files (asv:DIR, "
                                                        "pytest:PATH), or benchmarks and suites: list theirs")] = None,
    select: BenchOption = None,
    fmt: FormatOption = "table",
) -> None:
    """Benchmarks with their params and defaults, and the suites (of TARGETS: their benchmarks and cases)."""
    from colbench.app.catalog import catalog, select_benches, source_catalog

    if targets:
        with output_format(fmt):
            _list_sources(source_catalog(select_benches(targets, select)), fmt)
        return
    with output_format(fmt):
        _list_catalog(catalog(), fmt)


def _list_catalog(found: Any, fmt: str) -> None:
    benches, suites = found.benchmarks, found.suites
    if fmt == "json":
        typer.echo(json.dumps({
            "benchmarks": {n: {"description": b.description, "params": {
                p.name: {"default": list(p.default), "choices": list(p.choices) if p.choices else None,
                         "help": p.help} for p in b.full_grid().params}} for n, b in benches.items()},
            "suites": {n: {"description": s.description, "benchmarks": [e.benchmark for e in s.entries]}
                       for n, s in suites.items()},
        }, indent=2, default=str))
        return
    table = Table(title="benchmarks", show_lines=True)
    for column in ("name", "description", "params (default; choices)"):
        table.add_column(column)
    for name, bench in benches.items():
        lines = []
        for p in bench.full_grid().params:
            default = ",".join(map(str, p.default))
            choices = f"; {p.describe_choices()}" if p.choices else ""
            lines.append(f"{p.name} = {default}{choices}")
        table.add_row(name, bench.description, "\n".join(lines))
    console.print(table)
    if suites:
        suite_table = Table(title="suites")
        for column in ("name", "description", "benchmarks"):
            suite_table.add_column(column)
        for name, suite in suites.items():
            suite_table.add_row(name, suite.description, ", ".join(dict.fromkeys(e.benchmark for e in suite.entries)))
        console.print(suite_table)


def _list_sources(benches: dict[str, Any], fmt: str) -> None:
    """The benchmarks of the targets, each with its params (asv's strings) and its count of cases."""
    counts = {name: sum(1 for p in b.grid.expand(b.grid.choose()) if b.valid(p) is None)
              for name, b in benches.items()}
    if fmt == "json":
        typer.echo(json.dumps({"benchmarks": {n: {"description": b.description, "cases": counts[n], "params": {
            p.name: list(p.default) for p in b.grid.params}} for n, b in benches.items()},
            "total": {"benchmarks": len(benches), "cases": sum(counts.values())}}, indent=2, default=str))
        return
    table = Table(title="benchmarks", show_lines=False)
    for column in ("name", "cases", "params"):
        table.add_column(column)
    for name, bench in benches.items():
        shown = "; ".join(f"{p.name} = {', '.join(map(str, p.default))}" for p in bench.grid.params)
        table.add_row(name, str(counts[name]), shown or "-")
    console.print(table)
    for name, bench in benches.items():
        if name.startswith("asv-import:"):  # a module of an asv suite that does not import (an error row in a run)
            console.print(f"[yellow]{name[len('asv-import:'):]}[/yellow]: {bench.description}")
    console.print(f"{plural(len(benches), 'benchmark')}, {plural(sum(counts.values()), 'case')}")


@friendly
def machine(
    fmt: FormatOption = "table",
    name: Annotated[str | None, typer.Option(help="machine name (part of the fingerprint)")] = None,
) -> None:
    """Machine info and the checks that tell how noisy timings will be here."""
    from colbench.app.machine import describe_machine

    described = describe_machine(name)
    if fmt == "json":
        typer.echo(json.dumps({"machine": described.info, "checks": described.checks}, indent=2))
        return
    with output_format(fmt):
        _print_machine(described.info, described.checks)


def _print_machine(info: Any, checks: Any) -> None:
    table = Table(title=f"machine {info['name']} ({info['machine_id']})", show_header=False)
    for key, value in info.items():
        table.add_row(key, ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else str(value))
    console.print(table)
    for check in checks:
        mark = "[green]ok[/green]" if check["ok"] else "[yellow]warning[/yellow]"
        console.print(f"{mark}  {check['message']}")
