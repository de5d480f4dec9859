"""`colbench setup r|java`: install or build the workers in other languages."""

from __future__ import annotations

import subprocess

import typer

setup_app = typer.Typer(help="Install or build the R and Java workers.", no_args_is_help=True)


def _run_script(runtime: str) -> None:
    from colbench.runtimes import get_runtime, workers_dir

    script = get_runtime(runtime).setup_script
    assert script is not None, runtime
    path = workers_dir() / script
    if not path.exists():
        typer.echo(f"colbench: error: {path} not found: run this from a colbench source checkout", err=True)
        raise typer.Exit(2)
    result = subprocess.run(["bash", str(path)], check=False)
    if result.returncode != 0:
        typer.echo(f"colbench: error: {script} failed with exit code {result.returncode}", err=True)
        raise typer.Exit(1)


@setup_app.command("r")
def setup_r() -> None:
    """Install R with data.table, readr and vroom from Debian's packages (needs root and apt)."""
    _run_script("r")


@setup_app.command("java")
def setup_java() -> None:
    """Build the Arrow Java worker jar with Maven."""
    _run_script("java")
