"""`colbench setup r|java`: install or build the workers in other languages."""

from __future__ import annotations

import subprocess

import typer

setup_app = typer.Typer(help="Install or build the R and Java workers.", no_args_is_help=True)

SCRIPTS = {"r": ("r", "install.sh"), "java": ("java", "build.sh")}


def _run_script(runtime: str) -> None:
    from colbench.runner.execute import workers_dir

    folder, script = SCRIPTS[runtime]
    path = workers_dir() / folder / script
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
