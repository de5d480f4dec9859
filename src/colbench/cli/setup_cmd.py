"""`colbench setup r|java`: install the R worker's packages, build the Java worker's jars.

Both work from an installed wheel: the workers' files are package data (runtimes/sources.py); R packages
come from the system's package manager, Java jars are built into $COLBENCH_HOME, never into site-packages.
"""

from __future__ import annotations

from typing import Annotated

import typer

from colbench.cli.common import UsageError, console, friendly

setup_app = typer.Typer(help="Install or build the R and Java workers.", no_args_is_help=True)


@setup_app.command("r")
def setup_r(
    check: Annotated[bool, typer.Option("--check", help="only report whether R is ready (exit 1 if not)")] = False,
) -> None:
    """Install R with data.table, readr, vroom, jsonlite and R.utils from Debian's packages (needs root and apt)."""
    from colbench.app.setup import setup_r as run_setup_script

    try:
        returncode = run_setup_script(check)
    except UsageError as exc:
        typer.echo(f"colbench: error: {exc}", err=True)
        raise typer.Exit(2) from None
    if returncode != 0:
        if not check:
            typer.echo(f"colbench: error: installing R failed (exit code {returncode}): see above", err=True)
        raise typer.Exit(1)


@setup_app.command("java")
@friendly
def setup_java(
    arrow: Annotated[list[str] | None, typer.Option("--arrow", help="Arrow Java version(s) to build for "
                                                    "(repeatable; default: the worker's own, see pom.xml)")] = None,
    force: Annotated[bool, typer.Option("--force", help="rebuild even when a current jar is cached")] = False,
) -> None:
    """Build the Arrow Java worker with Maven into $COLBENCH_HOME/workers/java/<arrow-version>/."""
    from colbench.app.setup import JavaWorker
    from colbench.app.setup import setup_java as build_workers

    def say_cached(worker: JavaWorker) -> None:
        if worker.cached:
            console.print(f"Java worker for Arrow Java {worker.arrow_version}: {worker.jar} (already built)",
                          highlight=False)

    build_workers(arrow or (), force=force, say=lambda line: console.print(line, highlight=False),
                  on_worker=say_cached)
