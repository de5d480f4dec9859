"""What the `colbench` sub-commands share: the consoles, the store option, one-line user errors, the parsers of
options several commands take (thresholds, durations, sizes, measures, targets' completion), and the views
several commands print (a run's results and claims, the comparisons of two sides).

Command modules (`*_cmd.py`) import this module and `progress.py` only, never each other (an import contract in
pyproject.toml holds it)."""

from __future__ import annotations

import errno
import math
import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Annotated, Any, Literal

import typer
from rich.console import Console
from rich.errors import MarkupError
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from colbench.app.errors import UsageError
from colbench.app.stores import store_at
from colbench.bounded_http import DEADLINE_ENV, DEFAULT_DEADLINE_S
from colbench.model.metrics import Measure
from colbench.model.records import Run
from colbench.paths import UnsafePath
from colbench.redact import clip, printable, redact
from colbench.render.fmt import fmt_bytes
from colbench.render.tables import plain
from colbench.report.tables import markdown_table, table_view
from colbench.report.terminal import render_text, results_table
from colbench.words import plural


class OutputConsole(Console):
    """The console of a command's results. In Markdown mode (`--format markdown`) every command prints what its
    table mode prints, each Rich table as a Markdown table and every other line as plain text, so one set of
    `--format` choices means the same in every command without a Markdown renderer per command."""

    markdown = False

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if not self.markdown:
            super().print(*objects, **kwargs)
            return
        typer.echo("\n".join(_markdown_of(o) for o in objects))


def _markdown_of(renderable: Any) -> str:
    if isinstance(renderable, Table):
        return markdown_table(table_view(renderable)) + "\n"
    if isinstance(renderable, Text):
        return renderable.plain
    if isinstance(renderable, str):
        try:
            return Text.from_markup(renderable).plain
        except MarkupError:
            return renderable
    capture = Console(width=160, no_color=True, soft_wrap=True)
    with capture.capture() as captured:
        capture.print(renderable)
    return captured.get().rstrip("\n")


# Wide enough for the results table when the output is a file or a CI log rather than a terminal.
# soft_wrap: a message is one line the terminal folds where it must, never a line broken mid-sentence by Rich (a
# copied command stays whole); tables still fit the width
console = OutputConsole(width=None if sys.stdout.isatty() else 160, soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

# One set of --format choices for every command that prints results: the terminal's tables, the same as Markdown
# (a pull-request comment, a file), or JSON for tools. `show` adds csv (its rows); files have their own formats
# (`export`, `report`, `data make`).
OutputFormat = Literal["table", "markdown", "json"]
FORMAT_HELP = "table (for the terminal), markdown (the same tables, for a comment or a file) or json (for tools)"
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help=FORMAT_HELP)]


@contextmanager
def output_format(fmt: str) -> Iterator[None]:
    """While a command prints its results: Markdown tables and plain lines on stdout when `fmt` is markdown."""
    console.markdown = fmt == "markdown"
    try:
        yield
    finally:
        console.markdown = False

def default_store_help() -> str:
    """Where the store is when --store is not given, as this environment says (COLBENCH_STORE, else COLBENCH_HOME,
    else ~/.colbench), a password in a URL masked."""
    from colbench.paths import default_store_url

    return f"DuckDB file or postgresql:// URL (default $COLBENCH_STORE, else $COLBENCH_HOME/results.duckdb; here: " \
           f"{redact(default_store_url())})"


StoreOption = Annotated[str | None, typer.Option("--store", help=default_store_help())]
ClusterOption = Annotated[str | None, typer.Option("--cluster", envvar="COLBENCH_CLUSTER", show_envvar=True,
                                                   help="run on a Dask cluster: its scheduler's address "
                                                   "(tcp://host:8786), or local:N worker processes here; see "
                                                   "docs/scale.md")]
# Options `bisect` and `watch` share: one definition, one parser, one meaning
BenchOption = Annotated[list[str] | None, typer.Option(
    "--bench", "-b", help="with an asv suite or pytest files (asv:DIR, pytest:PATH): a regular expression searched "
    "in each benchmark's name, as asv's -b (repeatable: any of them)")]
ParamOption = Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=VALUE (repeatable)")]
WithOption = Annotated[list[str] | None, typer.Option("--with", help="a requirement for every version's environment, "
                                                      "e.g. 'numpy<2' (repeatable)")]
VarOption = Annotated[list[str] | None, typer.Option("--var", help="KEY=VALUE: an environment variable for every "
                                                     "version's workers (repeatable)")]
IndexOption = Annotated[str | None, typer.Option("--index", help="the package index to list and install the "
                                                 "package from (default: uv's own settings, else PyPI)")]
NetDeadlineOption = Annotated[float | None, typer.Option(
    "--net-deadline", envvar=DEADLINE_ENV, metavar="SECONDS",
    help=f"the most a network call may take in all, however the server answers (default {DEFAULT_DEADLINE_S:g})")]


def net_deadline(seconds: float | None) -> float | None:
    """--net-deadline checked (a finite number above 0), or None for the default."""
    if seconds is None:
        return None
    from colbench.bounded_http import NetError, check_deadline

    try:
        return check_deadline(seconds)
    except NetError as exc:
        raise UsageError(str(exc)) from None


#: the user-facing error classes: (module, class). Only those of modules already imported are looked at: an
#: exception of a module never imported cannot have been raised, and importing one here (analysis pulls scipy)
#: would cost a failing command seconds
USER_ERRORS = (("colbench.analysis.comparison", "ComparisonError"), ("colbench.bounded_http", "NetError"),
               ("colbench.benchmarks.registry", "UnknownTarget"),
               ("colbench.data.errors", "DataError"), ("colbench.model.metrics", "UnknownMetric"),
               ("colbench.model.params", "ParamError"), ("colbench.model.env_request", "EnvError"),
               ("colbench.runner.plan", "PlanError"), ("colbench.store.base", "StoreError"))


#: a run stopped by SIGINT, SIGTERM or SIGHUP (it carries the exit code a shell reports), looked up as the user
#: errors are: only a command that ran something can have raised it
INTERRUPTED = ("colbench.runner.interrupt", "Interrupted")


def _loaded(errors: tuple[tuple[str, str], ...]) -> tuple[type[BaseException], ...]:
    return tuple(getattr(sys.modules[module], name) for module, name in errors if module in sys.modules)


def _user_errors() -> tuple[type[BaseException], ...]:
    return (UsageError, UnsafePath, *_loaded(USER_ERRORS))


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
        except _loaded((INTERRUPTED,)) as exc:  # SIGINT/SIGTERM during a run: exit 130/143, as a shell reports it
            err_console.print(f"colbench: {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(getattr(exc, "exit_code", 128 + signal.SIGINT)) from None
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


def parse_threshold(text: str | None) -> float | None:
    """`3%` or `0.03` → 0.03; None (not given) stays None: each metric then uses its own default."""
    if text is None:
        return None
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise UsageError(f"--threshold {text!r}: write e.g. 3% or 0.03") from None
    if not 0 < value < 1:
        raise UsageError(f"--threshold {text!r}: must be between 0% and 100%")
    return value


def parse_duration(text: str, option: str = "--budget") -> float:
    """'90s', '10m', '1h', '1h30m' or plain seconds → seconds."""
    cleaned = text.strip().lower().replace(" ", "")
    parts = re.fullmatch(r"((\d+(\.\d+)?)h)?((\d+(\.\d+)?)m)?((\d+(\.\d+)?)s?)?", cleaned)
    if not cleaned or parts is None:
        raise UsageError(f"{option} {text!r}: write e.g. 90s, 10m, 1h or 1h30m")
    hours, minutes, seconds = parts.group(2), parts.group(5), parts.group(8)
    total = float(hours or 0) * 3600 + float(minutes or 0) * 60 + float(seconds or 0)
    if total <= 0:
        raise UsageError(f"{option} {text!r}: must be more than 0 seconds")
    return total


def parse_params(options: list[str] | None, one_value: str | None = None) -> dict[str, list[str]]:
    """`--param NAME=VALUE` options → overrides; `one_value` names the command that measures one case (bisect),
    which takes one value a param."""
    from colbench.model.params import parse_param_option

    overrides: dict[str, list[str]] = {}
    for option in options or []:
        name, values = parse_param_option(option)
        if one_value and len(values) > 1:
            raise UsageError(f"--param {name}: {one_value} measures one case; give one value, not {', '.join(values)}")
        overrides[name] = values
    return overrides


def parse_variables(options: list[str] | None) -> dict[str, str]:
    """`--var KEY=VALUE` options → the variables of every worker (model/env_request.py's grammar)."""
    from colbench.model.env_request import EnvError
    from colbench.model.env_request import parse_variables as parse

    try:
        return parse(options or [])
    except EnvError as exc:
        raise UsageError(str(exc)) from None


def parse_measure_option(text: str) -> Measure:
    from colbench.model.metrics import parse_measure

    try:
        return parse_measure(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def complete_targets(incomplete: str) -> list[str]:
    """Shell completion of benchmark and suite names for `colbench run TARGET…` (Typer completes commands and
    options by itself: `colbench --install-completion`)."""
    from colbench.app.catalog import target_names

    return [name for name in target_names() if name.startswith(incomplete)]


def _store(url: str | None, create: bool = True) -> Any:
    """The store of `--store` (else $COLBENCH_STORE, else the default file). `create=False` is for commands that
    only read: the store must exist and a DuckDB file is opened read-only, so reading never changes it."""
    return store_at(url, create)


def print_comparisons(comparisons: list[Any], fmt: str, baseline: str, contender: str, notes: list[str]) -> None:
    """The verdicts of one contender against the baseline (`compare`, and `run` with several environments)."""
    from rich.table import Table

    from colbench.report.compare_text import (
        TABLE_COLUMNS,
        json_report,
        markdown_report,
        summary_line,
        table_rows,
    )

    if fmt == "markdown":
        typer.echo(markdown_report(comparisons, baseline_label=baseline, contender_label=contender))
    elif fmt == "json":
        typer.echo(json_report(comparisons, baseline=baseline, contender=contender, notes=notes))
    else:
        table = Table(title=plain(f"{contender} vs {baseline}"))
        for column in TABLE_COLUMNS:
            table.add_column(column)
        styles = {"regression": "red", "improvement": "green", "no change": "", "inconclusive": "yellow"}
        for comparison, row in zip(comparisons, table_rows(comparisons), strict=True):
            table.add_row(*(plain(cell) for cell in row), style=styles.get(str(comparison.verdict), ""))
        console.print(table)
        console.print(summary_line(comparisons))
    if fmt != "json":
        for note in notes:
            typer.echo(f"note: {note}", err=True)


def show_run(db: Any, run_id: str, fmt: str, errors: bool = False) -> None:
    """A run's results, one row per case (`show`, and `run` when it ends); `errors`: each failed case's message,
    traceback and stderr instead."""
    from colbench.app.show import bandwidth_of, experiment_tables, run_view

    view = run_view(db, run_id)
    run_doc, summaries = view.run, view.summaries
    if errors:
        show_errors(summaries, run_id, fmt)
        return
    if fmt == "table":
        title = plain(f"run {run_id}" + (f" ({run_doc.name})" if run_doc.name else "") +
                      f" on {run_doc.machine['name']} — {run_doc.status}")
        console.print(results_table(summaries, title=title, bandwidth=bandwidth_of(run_doc)))
        for table in experiment_tables(view):
            console.print(table)
        for check in run_doc.checks:
            if not check["ok"]:
                console.print(f"[yellow]warning:[/yellow] {check['message']}")
        failed = sum(not s.ok for s in summaries)
        if failed:
            console.print(f"[red]{plural(failed, 'case')} ended in an error[/red]: `colbench show {run_id} --errors` "
                          "shows each one's traceback and the worker's last stderr lines", highlight=False)
        _show_profiles(db, run_id)
    else:
        typer.echo(render_text(summaries, fmt))


def show_errors(summaries: list[Any], run_id: str, fmt: str) -> None:
    """Every way a case of the run failed: what failed, in which processes, the message, the traceback and the
    worker's last stderr lines (`show --errors`); json: the same as a list."""
    import json
    from dataclasses import asdict

    from colbench.report.terminal import error_views

    views = error_views(summaries)
    if fmt == "json":
        typer.echo(json.dumps([{**asdict(v), "cause": v.cause} for v in views], indent=2, default=str))
        return
    if not views:
        console.print(f"no case of run {run_id} ended in an error", highlight=False)
        return
    for view in views:
        env = f" [{view.env}]" if view.env != "default" else ""
        where = f"{'process' if len(view.processes) == 1 else 'processes'} {', '.join(map(str, view.processes))}"
        exit_text = f", exit code {view.exit_code}" if view.exit_code else ""
        console.print(plain(f"{view.kind}: {view.label}{env} ({where}{exit_text})"), style="bold red")
        for line in view.message.rstrip().splitlines():  # one at a time: plain() escapes a newline inside one
            console.print(plain(line))
        for title, text in (("traceback", view.traceback), ("stderr (last lines)", view.stderr_tail)):
            if text:
                console.print(plain(f"  {title}:"), style="dim")
                for line in text.splitlines():
                    console.print(plain(f"    {line}"))
        console.print()


def _show_profiles(db: Any, run_id: str) -> None:
    """The profiles `run --profile` kept for the run, and how to use them."""
    from colbench.app.show import kept_profiles

    kept = kept_profiles(db, run_id)
    if kept is None:
        return
    console.print(f"profiles: {kept.count} (case × environment: {', '.join(kept.envs)}), {fmt_bytes(kept.size_bytes)} "
                  f"in {kept.folder}; `colbench explain {run_id}:{kept.envs[0]} OTHER` diffs them without running "
                  "again", highlight=False, soft_wrap=True)


def show_claims(db: Any, run_doc: Run) -> None:
    """After a run of an experiment suite: the post's claims over what it measured."""
    from colbench.app.claims import claims_of_run
    from colbench.report.claims import claims_table, counts_line

    answer = claims_of_run(db, run_doc)
    if answer is None:
        return
    console.print(claims_table(answer.verdicts, answer.untestable, cores=answer.cores))
    console.print(f"claims: {counts_line(answer.verdicts)} (`colbench claims {run_doc.run_id}` to see them again)",
                  highlight=False)
