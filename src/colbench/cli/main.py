"""The `colbench` command: the app, and every command registered in one place.

Each command lives in a module of its own (`*_cmd.py`) as a plain function (or a Typer group for `data`, `env`,
`setup` and `store`); this module only names them. Commands parse, call the layers below and print; bad input is
one line on stderr and exit code 2."""

from __future__ import annotations

import inspect
import re
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from colbench.cli.common import (
    err_console,
)

# rich_markup_mode=None: click's own help layout. It rewraps each paragraph to the terminal's width (a docstring's line
# breaks never show as breaks mid-sentence) and never cuts an option name or a default short with "…", as Rich's
# panels did at 80 columns (a pipe, a CI log); Rich still prints everything else
app = typer.Typer(no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="colbench: how fast data gets into and out of columnar memory.")


def _print_version(value: bool) -> None:
    if value:
        import colbench

        typer.echo(f"colbench {colbench.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="print colbench's version and exit")] = False,
) -> None:
    """colbench: how fast data gets into and out of columnar memory."""


from colbench.cli import (  # noqa: E402  (the app above is what these register on)
    bisect_cmd,
    calibrate_cmd,
    claims_cmd,
    compare_cmd,
    data_cmd,
    delete_cmd,
    doctor_cmd,
    env_cmd,
    explain_cmd,
    history_cmd,
    report_cmd,
    results_cmd,
    run_cmd,
    setup_cmd,
    store_cmd,
    watch_cmd,
)

COMMANDS = (
    ("run", run_cmd.run), ("show", results_cmd.show), ("export", results_cmd.export), ("delete", delete_cmd.delete),
    ("list", results_cmd.list_benchmarks), ("machine", results_cmd.machine), ("compare", compare_cmd.compare),
    ("explain", explain_cmd.explain),
    ("history", history_cmd.history), ("calibrate", calibrate_cmd.calibrate), ("claims", claims_cmd.claims),
    ("report", report_cmd.report), ("serve", report_cmd.serve), ("publish", store_cmd.publish_command),
    ("doctor", doctor_cmd.doctor), ("bisect", bisect_cmd.bisect), ("watch", watch_cmd.watch),
)
GROUPS = (("data", data_cmd.data_app), ("setup", setup_cmd.setup_app), ("env", env_cmd.env_app),
          ("store", store_cmd.store_app))



def summary(doc: str | None) -> str:
    """The first sentence of a docstring, its line breaks joined: what a list of commands shows for one (click
    would otherwise cut it after 45-odd characters with "...", mid-sentence)."""
    paragraph = " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z`(])", paragraph)
    return paragraph[:match.start()] if match else paragraph


def _summarize_subcommands(group: typer.Typer) -> None:
    for info in group.registered_commands:
        if info.short_help is None:
            info.short_help = summary(info.help or inspect.getdoc(info.callback))


for _name, _command in COMMANDS:
    app.command(_name, short_help=summary(inspect.getdoc(_command)))(_command)
for _name, _group in GROUPS:
    _summarize_subcommands(_group)
    app.add_typer(_group, name=_name, short_help=summary(_group.info.help if isinstance(_group.info.help, str)
                                                          else inspect.getdoc(_group.registered_callback.callback)
                                                          if _group.registered_callback else ""))


def cli() -> None:
    """The `colbench` command. A usage error found while parsing (an unknown option, a value out of range, a missing
    argument) is one line on stderr with exit code 2, like every other bad input, rather than click's framed block."""
    from rich.markup import escape

    if TYPE_CHECKING:  # checked against the typer installed, which vendors its own click
        from typer._click import exceptions as click_errors
    else:
        try:  # typer vendors its own click since 0.2x; its exceptions are the ones raised
            from typer._click import exceptions as click_errors
        except ImportError:  # pragma: no cover - an older typer on plain click
            from click import exceptions as click_errors

    try:
        code = app(standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:  # `colbench data` alone: the group's help, on stdout as before
        typer.echo(exc.format_message())
        sys.exit(exc.exit_code)
    except click_errors.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        err_console.print(f"[red]colbench: error:[/red] {escape(exc.format_message())}{hint}", highlight=False,
                          soft_wrap=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("Aborted!", highlight=False)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
