"""`colbench show`, `export`, `list` and `machine`: what is stored, what can run, where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import (
    StoreOption,
    UsageError,
    _store,
    console,
    friendly,
    show_run,
)
from colbench.render.tables import plain
from colbench.report.terminal import render_rows
from colbench.store.base import ResultQuery, resolve_run_id
from colbench.words import plural


@friendly
def show(
    run_id: Annotated[str, typer.Argument(help="run id, a prefix, a run name, or 'latest'")] = "latest",
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json, csv or markdown")] = "table",
    store: StoreOption = None,
    runs: Annotated[bool, typer.Option("--runs", help="list the runs in the store instead")] = False,
    errors: Annotated[bool, typer.Option("--errors", help="each failed case's error: message, traceback and the "
                                         "worker's last stderr lines (table or json)")] = False,
) -> None:
    """Show a run's results, one row per case (processes pooled), or list the runs."""
    if fmt not in ("table", "json", "csv", "markdown"):
        raise UsageError(f"--format {fmt!r}: choose table, json, csv or markdown")
    db = _store(store, create=False)
    if runs:
        _show_runs(db, fmt)
        return
    if errors and fmt not in ("table", "json"):
        raise UsageError(f"--errors --format {fmt!r}: choose table or json")
    show_run(db, resolve_run_id(db, run_id), fmt, errors=errors)


def _show_runs(db: Any, fmt: str) -> None:
    rows = [{"run_id": r.run_id, "name": r.name, "started_at": r.started_at, "status": r.status, "cases": r.cases,
             "machine": r.machine["name"]} for r in (run.redacted() for run in db.list_runs())]
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
    from colbench.store.export import FORMATS, export_results

    if fmt not in (*FORMATS, "conbench"):
        raise UsageError(f"--format {fmt!r}: choose from {', '.join(FORMATS)}, conbench")
    output = output or Path(f"colbench-results.{'json' if fmt == 'conbench' else fmt}")
    if output.is_dir():
        raise UsageError(f"--output {output}: is a directory; give a file name, e.g. {output / ('results.' + fmt)}")
    db = _store(store, create=False)
    ids = tuple(resolve_run_id(db, r) for r in run_ids) if run_ids else None
    results = [r.redacted() for r in db.results(ResultQuery(run_ids=ids))]  # older records may hold secrets
    try:
        if fmt == "conbench":
            from colbench.store.conbench.export import export_documents

            runs = {run_id: db.get_run(run_id).redacted() for run_id in {r.run_id for r in results}}
            count = export_documents(results, runs, output)
        else:
            count = export_results(results, fmt, output)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
    console.print(f"wrote {plural(count, 'row')} to {output}")


@friendly
def list_benchmarks(
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json")] = "table",
) -> None:
    """Benchmarks with their params and defaults, and the suites."""
    from colbench.benchmarks.registry import all_benchmarks
    from colbench.experiments.registry import all_suites

    benches = all_benchmarks()
    suites = all_suites()
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


@friendly
def machine(
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json")] = "table",
    name: Annotated[str | None, typer.Option(help="machine name (part of the fingerprint)")] = None,
) -> None:
    """Machine info and the checks that tell how noisy timings will be here."""
    from colbench.machine.facts import checks_as_json, environment_checks, machine_info

    info = machine_info(name)
    checks = environment_checks(info)
    if fmt == "json":
        typer.echo(json.dumps({"machine": info, "checks": checks_as_json(checks)}, indent=2))
        return
    table = Table(title=f"machine {info['name']} ({info['machine_id']})", show_header=False)
    for key, value in info.items():
        table.add_row(key, ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else str(value))
    console.print(table)
    for check in checks:
        mark = "[green]ok[/green]" if check.ok else "[yellow]warning[/yellow]"
        console.print(f"{mark}  {check.message}")
