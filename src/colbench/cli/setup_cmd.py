"""`colbench setup r|java`: install the R worker's packages, build the Java worker's jars.

Both work from an installed wheel: the workers' files are package data (runtimes/sources.py); R packages
come from the system's package manager, Java jars are built into $COLBENCH_HOME, never into site-packages.
"""

from __future__ import annotations

import subprocess
from typing import Annotated

import typer

from colbench.cli.common import console, friendly

setup_app = typer.Typer(help="Install or build the R and Java workers.", no_args_is_help=True)


@setup_app.command("r")
def setup_r(
    check: Annotated[bool, typer.Option("--check", help="only report whether R is ready (exit 1 if not)")] = False,
) -> None:
    """Install R with data.table, readr, vroom, jsonlite and R.utils from Debian's packages (needs root and apt)."""
    from colbench.runtimes import get_runtime
    from colbench.runtimes.sources import WorkerSourcesError, worker_file

    try:
        script = worker_file(*str(get_runtime("r").setup_script).split("/"))
    except WorkerSourcesError as exc:
        typer.echo(f"colbench: error: {exc}", err=True)
        raise typer.Exit(2) from None
    result = subprocess.run(["bash", str(script), *(["--check"] if check else [])], check=False)
    if result.returncode != 0:
        if not check:
            typer.echo(f"colbench: error: installing R failed (exit code {result.returncode}): see above", err=True)
        raise typer.Exit(1)


@setup_app.command("java")
@friendly
def setup_java(
    arrow: Annotated[list[str] | None, typer.Option("--arrow", help="Arrow Java version(s) to build for "
                                                    "(repeatable; default: the worker's own, see pom.xml)")] = None,
    force: Annotated[bool, typer.Option("--force", help="rebuild even when a current jar is cached")] = False,
) -> None:
    """Build the Arrow Java worker with Maven into $COLBENCH_HOME/workers/java/<arrow-version>/."""
    from colbench.cli.common import UsageError
    from colbench.runtimes.java import JavaWorkerError, build_jar, default_arrow_version, ready_jar

    try:
        versions = arrow or [default_arrow_version()]
        for version in versions:
            cached = None if force else ready_jar(version)
            if cached is not None:
                console.print(f"Java worker for Arrow Java {version}: {cached} (already built)", highlight=False)
                continue
            build_jar(version, force=force, say=lambda line: console.print(line, highlight=False))
    except JavaWorkerError as exc:
        raise UsageError(str(exc)) from None
