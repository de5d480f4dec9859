"""What every `colbench` sub-command shares: the consoles, the store option, and one-line user errors."""

from __future__ import annotations

import errno
import math
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
from colbench.redact import clip, printable, redact
from colbench.runner.interrupt import Interrupted

# Wide enough for the results table when the output is a file or a CI log rather than a terminal.
# soft_wrap: a message is one line the terminal folds where it must, never a line broken mid-sentence by Rich (a
# copied command stays whole); tables still fit the width
console = Console(width=None if sys.stdout.isatty() else 160, soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

StoreOption = Annotated[str | None, typer.Option("--store", help="DuckDB file or postgresql:// URL "
                                                 "(default $COLBENCH_STORE or ~/.colbench/results.duckdb)")]


#: the user-facing error classes: (module, class). Only those of modules already imported are looked at: an
#: exception of a module never imported cannot have been raised, and importing one here (analysis pulls scipy)
#: would cost a failing command seconds
USER_ERRORS = (("colbench.analysis.comparison", "ComparisonError"), ("colbench.benchmarks.registry", "UnknownTarget"),
               ("colbench.data.errors", "DataError"), ("colbench.model.metrics", "UnknownMetric"),
               ("colbench.model.params", "ParamError"), ("colbench.runtimes.python", "EnvError"),
               ("colbench.runner.plan", "PlanError"), ("colbench.store.base", "StoreError"))


def _user_errors() -> tuple[type[BaseException], ...]:
    loaded = [getattr(sys.modules[module], name) for module, name in USER_ERRORS if module in sys.modules]
    return (UsageError, UnsafePath, *loaded)


def friendly(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn colbench's user-facing errors into one line and exit code 2."""
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except _user_errors() as exc:
            say_error(str(exc))
            raise typer.Exit(2) from None
        except OSError as exc:  # a user's path, a full disk, a read-only or vanished directory: one line, no traceback
            say_error(os_error_line(exc))
            raise typer.Exit(2) from None
        except Interrupted as exc:  # SIGINT/SIGTERM during a run: exit 130/143, as a shell would report it
            err_console.print(f"colbench: {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:  # Ctrl-C outside a run (preparing one, a download, a report): no traceback
            err_console.print("colbench: interrupted", highlight=False)
            raise typer.Exit(128 + signal.SIGINT) from None
    return wrapper


#: the longest message colbench prints in one line; anything longer quotes user input at length
MESSAGE_LIMIT = 600


def say_error(message: str) -> None:
    """One line on stderr: secrets masked (the last line of defence: a URL with a password may be quoted in any
    message), control characters escaped, long input cut."""
    text = clip(printable(redact(message)), MESSAGE_LIMIT)
    err_console.print(f"[red]colbench: error:[/red] {escape(text)}", highlight=False, soft_wrap=True)


def os_error_line(exc: OSError) -> str:
    """'cannot write /x/y: No space left on device (ENOSPC): free some space …' and the like."""
    where = f" {exc.filename}" if exc.filename else ""
    code = errno.errorcode.get(exc.errno or 0, "")
    reason = exc.strerror or str(exc)
    advice = {errno.ENOSPC: "free some space there, or point COLBENCH_HOME (or --store, COLBENCH_DATA) at a disk "
                            "with room; a run stopped this way continues with `colbench run --resume RUN`",
              errno.EDQUOT: "the disk quota is full: free some space",
              errno.EACCES: "check the permissions, or choose a place you can write",
              errno.EPERM: "check the permissions, or choose a place you can write",
              errno.EROFS: "the file system is read-only: choose a writable place",
              errno.ENOENT: "check the path",
              errno.ENOTDIR: "a part of the path is a file, not a directory",
              errno.EISDIR: "give a file, not a directory",
              errno.EFBIG: "the file grew past the size limit (ulimit -f)"}.get(exc.errno or 0, "")
    return f"cannot use{where}: {reason}{f' ({code})' if code else ''}{f'; {advice}' if advice else ''}"


def finite(value: float | None) -> float | None:
    """A Typer callback for float options: NaN and infinities are not numbers a user means (click's ranges let NaN
    through, since every comparison with it is false)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


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
