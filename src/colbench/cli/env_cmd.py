"""`colbench env list|clean`: the cached uv environments."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from colbench.cli.common import console, friendly
from colbench.words import plural

env_app = typer.Typer(help="uv environments for comparing library versions.", no_args_is_help=True)


@env_app.command("list")
@friendly
def env_list() -> None:
    """Environments built for --env, with their resolved versions and size."""
    from colbench.app.environments import built_environments

    table = Table(title="colbench environments")
    for column in ("key", "name", "python", "key packages", "size", "path"):
        table.add_column(column)
    for env in built_environments():
        key_packages = ", ".join(f"{k}=={v}" for k, v in env.libraries.items())
        table.add_row(env.key[:12], env.name, env.python_version, key_packages, f"{env.size_bytes / 2**20:.0f} MiB",
                      str(env.path))
    console.print(table)


@env_app.command("clean")
@friendly
def env_clean(keys: Annotated[list[str] | None, typer.Argument(help="keys (or prefixes); default all")] = None) -> None:
    """Delete environments."""
    from colbench.app.environments import clean_environments

    removed = clean_environments(keys or None)
    console.print(f"removed {plural(len(removed), 'environment')}")
