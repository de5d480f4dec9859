"""`colbench store copy|sync|info` and `colbench publish --conbench URL`.

Wiring (in cli/main.py): `app.add_typer(store_app, name="store")`, `app.command("publish")(publish_command)`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import (
    FormatOption,
    NetDeadlineOption,
    StoreOption,
    _store,
    console,
    friendly,
    net_deadline,
    output_format,
    say_error,
)
from colbench.words import plural

store_app = typer.Typer(help="Move results between stores, upload the local spool, describe a store.",
                        no_args_is_help=True)

RepositoryOption = Annotated[str | None, typer.Option(
    "--github-repository", envvar="CONBENCH_PROJECT_REPOSITORY",
    help="GitHub URL of the project under test (https://github.com/ORG/REPO), which Conbench requires")]


@store_app.command("copy")
@friendly
def copy_command(
    src: Annotated[str, typer.Argument(help="store to read: DuckDB file or postgresql:// URL")],
    dst: Annotated[str, typer.Argument(help="store to write (created when missing)")],
    run: Annotated[list[str] | None, typer.Option("--run", help="copy only this run (repeatable)")] = None,
) -> None:
    """Copy runs and results from SRC to DST (DuckDB ↔ PostgreSQL); copying again adds only what is new."""
    from colbench.app.store_admin import copy_runs

    copied = copy_runs(src, dst, run or ())
    console.print(f"copied {plural(copied.runs, 'run')} and {plural(copied.results, 'result')} from "
                  f"{copied.source_url} to {copied.target_url}", highlight=False)


@store_app.command("sync")
@friendly
def sync_command(store: StoreOption = None) -> None:
    """Write what waits in the store's spool: results a PostgreSQL store kept while its server was away, or a
    DuckDB store while another process held the file."""
    from colbench.app.store_admin import sync_spool

    synced = sync_spool(store)
    if synced.runs or synced.results:
        console.print(f"uploaded {plural(synced.runs, 'run record')} and {plural(synced.results, 'result')} from "
                      f"{synced.spool_dir} to {synced.url}", highlight=False)
    else:
        console.print(f"the local spool of {synced.url} is empty", highlight=False)
    if synced.left:
        console.print(f"[yellow]{plural(synced.left, 'record')} {'is' if synced.left == 1 else 'are'} being uploaded "
                      "by another colbench process[/yellow]")


def _count(value: Any) -> str:
    return "unreadable" if value is None else f"{value:,}"


@store_app.command("info")
@friendly
def info_command(
    store: StoreOption = None,
    fmt: FormatOption = "table",
    check: Annotated[bool, typer.Option("--check", help="read every table in full: finds damage the counts miss "
                                        "(slow on a big store)")] = False,
) -> None:
    """Schema version, number of runs and results, machines, and what waits in the local spool. On a damaged store
    it shows what is readable, then exits 2."""
    from colbench.app.store_admin import check_damage, describe_store

    found = describe_store(store, check=check)
    if fmt == "json":
        typer.echo(json.dumps(found, indent=2, default=str))
    else:
        with output_format(fmt):
            _print_info(found)
    check_damage(found)


def _print_info(found: dict[str, Any]) -> None:
    table = Table(title=f"{found['backend']} store {found['url']}", show_header=False)
    version = found["schema_version"]
    older = version < found["current_schema_version"]
    table.add_row("schema version", f"{version}" + (" (the next `colbench run` upgrades it; until then history and "
                                                    "compare read whole records)" if older else ""))
    if found.get("server"):
        table.add_row("server version", str(found["server"]))
    table.add_row("runs", _count(found["runs"]))
    table.add_row("results", _count(found["results"]))
    for machine in found["machines"]:
        table.add_row(f"machine {machine['machine_id']}",
                      f"{machine['name'] or '?'}: {plural(machine['results'], 'result')}")
    spool = found.get("spool")
    if spool and (spool["runs"] or spool["results"]):
        table.add_row("local spool", f"{plural(spool['results'], 'result')}, {plural(spool['runs'], 'run record')} in "
                      f"{spool['dir']}: "
                      "`colbench store sync` uploads them")
    for part, message in found["damaged"].items():
        table.add_row(f"[red]{part}[/red]", "unreadable: " + (message[:100] + "…" if len(message) > 100 else message))
    console.print(table)


def _say_published(report: Any) -> None:
    there = f", {report.present} there already" if report.present else ""
    refused = f", {len(report.refused)} refused" if report.refused else ""
    record = "run record with its finish time" if report.run_record else \
        "this server keeps no run records: the finish time is in each result's optional_benchmark_info"
    console.print(f"run {report.run_id}: {plural(report.cases, 'case')}, {report.posted} posted{there}{refused} "
                  f"({report.api}; {record})", highlight=False)


@friendly
def publish_command(
    run_ids: Annotated[list[str] | None, typer.Argument(help="runs to publish (default: the latest)")] = None,
    conbench: Annotated[str | None, typer.Option("--conbench", envvar="CONBENCH_URL",
                                                 help="the Conbench server, e.g. https://conbench.example.org "
                                                      "(login: $CONBENCH_EMAIL, $CONBENCH_PASSWORD)")] = None,
    store: StoreOption = None,
    github_repository: RepositoryOption = None,
    run_reason: Annotated[str | None, typer.Option(help="Conbench run reason, e.g. commit or pull-request")] = None,
    deadline: NetDeadlineOption = None,
) -> None:
    """Post runs to a Conbench server: one Conbench run per run, one result per case (all its processes).
    Publishing again posts only what the server does not hold yet. Exit 1 when the server refused a result
    (each one line on stderr; the rest is published), 2 when it cannot be reached or refuses the login."""
    from colbench.app.publish import PublishRequest, connect, publish, read_runs

    request = PublishRequest(conbench, tuple(run_ids or ()), github_repository, run_reason, net_deadline(deadline))
    session = connect(request)
    db = _store(store, create=False)
    try:
        runs = read_runs(db, request.runs)
    finally:
        db.close()
    reports = publish(request, runs, session, on_run=_say_published)
    refused = [(report.run_id, refusal) for report in reports for refusal in report.refused]
    for run_id, refusal in refused:
        say_error(f"Conbench at {session.shown_url} refused {refusal.case} of run {run_id}: {refusal.reason}")
    if refused:
        raise typer.Exit(1)
