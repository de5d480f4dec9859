"""What every `colbench` sub-command shares: the consoles, the store option, and one-line user errors."""

from __future__ import annotations

import re
import signal
import sys
from collections.abc import Callable
from functools import wraps
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from colbench.app.errors import UsageError
from colbench.paths import UnsafePath, default_store_url
from colbench.redact import redact
from colbench.runner.interrupt import Interrupted

# Wide enough for the results table when the output is a file or a CI log rather than a terminal.
console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True)

StoreOption = Annotated[str | None, typer.Option("--store", help="DuckDB file or postgresql:// URL "
                                                 "(default $COLBENCH_STORE or ~/.colbench/results.duckdb)")]


def _user_errors() -> tuple[type[BaseException], ...]:
    from colbench.analysis.comparison import ComparisonError
    from colbench.benchmarks.registry import UnknownTarget
    from colbench.data.errors import DataError
    from colbench.model.metrics import UnknownMetric
    from colbench.model.params import ParamError
    from colbench.runner.environments import EnvError
    from colbench.runner.plan import PlanError
    from colbench.store.base import StoreError

    return (UsageError, ParamError, PlanError, StoreError, UnknownTarget, DataError, ComparisonError, EnvError,
            UnsafePath, UnknownMetric)


def friendly(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn colbench's user-facing errors into one line and exit code 2."""
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except _user_errors() as exc:
            # the last line of defence for secrets: a URL with a password may be quoted in any message
            err_console.print(f"[red]colbench: error:[/red] {escape(redact(str(exc)))}", highlight=False,
                              soft_wrap=True)
            raise typer.Exit(2) from None
        except Interrupted as exc:  # SIGINT/SIGTERM during a run: exit 130/143, as a shell would report it
            err_console.print(f"colbench: {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:  # Ctrl-C outside a run (preparing one, a download, a report): no traceback
            err_console.print("colbench: interrupted", highlight=False)
            raise typer.Exit(128 + signal.SIGINT) from None
    return wrapper


def parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kKmMgGtT]?)(i?[bB])?\s*", text)
    if not match:
        raise UsageError(f"cannot read size {text!r}: write e.g. 512MB or 4GiB")
    number, prefix, suffix = float(match.group(1)), match.group(2).upper(), (match.group(3) or "")
    # 4GiB and 4G are binary; 4GB is decimal, as on a disk label
    base = 1000 if suffix.upper() == "B" and prefix else 1024
    return int(number * base ** " KMGT".index(prefix or " "))


def _store(url: str | None, create: bool = True) -> Any:
    """The store of `--store` (else $COLBENCH_STORE, else the default file). `create=False` is for commands that
    only read: the store must exist and a DuckDB file is opened read-only, so reading never changes it."""
    from colbench.store import open_store

    return open_store(url or default_store_url(), create=create, read_only=not create)
