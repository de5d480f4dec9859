"""`colbench doctor`: a report of the optional tools colbench can use here."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from colbench.app.doctor import Diagnosis, diagnose
from colbench.cli.common import FormatOption, console, output_format


def doctor(
    fmt: FormatOption = "table",
    strict: Annotated[bool, typer.Option("--strict", help="exit 1 when anything is missing or stale")] = False,
) -> None:
    """What is installed (R, Java, Maven, the Java worker, PostgreSQL, Valgrind, heaptrack, chromium, uv), what each
    enables, and the command that installs what is missing. Exit 0: it is a report (--strict: 1 if incomplete)."""
    found = diagnose()
    if fmt == "json":
        typer.echo(json.dumps([{**asdict(f), "ok": f.ok} for f in found.findings], indent=2))
    else:
        with output_format(fmt):
            _print_table(found)
    if strict and not found.complete:
        raise typer.Exit(1)


def _print_table(found: Diagnosis) -> None:
    install = found.install
    where = install.checkout if install.kind == "checkout" else install.source
    console.print(escape(f"colbench {found.version}, installed as: {install.kind} ({where})"),
                  highlight=False, soft_wrap=True)
    table = Table(title="colbench doctor")
    for column in ("", "what", "installed", "enables"):
        table.add_column(column)
    for f in found.findings:
        mark = "[green]ok[/green]" if f.ok else "[yellow]--[/yellow]"
        status = f.version or "missing"
        if f.note:
            status = f"{status}: {f.note}"
        table.add_row(mark, *(escape(text) for text in (f.name, status, f.enables)))
    console.print(table, highlight=False)
    findings, missing = found.findings, found.missing
    names = ", ".join(f.name.strip() for f in missing)
    console.print(escape(f"{len(findings) - len(missing)} of {len(findings)} ready"
                         + (f"; missing or stale: {names}" if missing else "")), highlight=False, soft_wrap=True)
    commands = found.install_commands()
    if commands:
        console.print("to install what is missing (commands for this install, one a line):", highlight=False)
    for command, what in commands.items():
        # whole lines, never wrapped: they are meant to be copied
        console.print(escape(f"  {command}    # {', '.join(what)}"), highlight=False, soft_wrap=True)
