"""`colbench report` (plots, a self-contained HTML report, or Markdown) and `colbench serve` (a read-only
dashboard over the store).

The integrator registers the two functions on the main app:
    app.command("report")(report_cmd.report)
    app.command("serve")(report_cmd.serve)
Until then (and for the tests) `python -m colbench.cli.report_cmd report|serve ...` runs the same commands.
Nothing from `colbench.cli.main` is imported at module level, so either side may be imported first.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path
from typing import Annotated

import typer

from colbench.cli.common import default_store_help
from colbench.words import plural

StoreOption = Annotated[str | None, typer.Option("--store", help=default_store_help())]


def report(
    run_ids: Annotated[list[str] | None, typer.Argument(help="runs: ids, unique prefixes, names or 'latest' "
                                                        "(default: latest)")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="directory to write (created if needed); "
                                         "with --format markdown, '-' prints to stdout")] = Path("colbench-report"),
    fmt: Annotated[str, typer.Option("--format", "-f", help="html (index.html + PNG/SVG plots) or markdown "
                                     "(text only)")] = "html",
    compare: Annotated[str | None, typer.Option("--compare", help="a baseline run: compare every reported run "
                                                "with it")] = None,
    history: Annotated[bool, typer.Option("--history/--no-history", help="history and change points of every "
                                          "case with 3+ runs on the machine")] = True,
    metric: Annotated[list[str] | None, typer.Option(help="time or instructions for the compares and histories "
                                                     "(repeatable; default every metric measured)")] = None,
    store: StoreOption = None,
) -> None:
    """Write a report of runs: plots (PNG + SVG) and a self-contained index.html, or a Markdown summary."""
    from colbench.cli.common import friendly

    friendly(_report)(run_ids, output, fmt, compare, history, store, metric)


def _report(run_ids: list[str] | None, output: Path, fmt: str, compare: str | None, history: bool,
            store: str | None, metrics: list[str] | None = None) -> None:
    from colbench.app.reports import ReportRequest, check_report, markdown_text, write_report
    from colbench.cli.common import _store, console

    request = ReportRequest(run_ids or ["latest"], output, fmt, compare, history, metrics)
    check_report(request)
    db = _store(store, create=False)
    if request.to_stdout:
        sys.stdout.write(markdown_text(db, request))
        return
    written = write_report(db, request)
    plots = sum(1 for path in written if path.suffix == ".png")
    console.print(f"wrote {written[0]}" + (f" and {plural(plots, 'plot')} (PNG + SVG) in {output}" if plots else ""),
                  highlight=False, soft_wrap=True)


def serve(
    store: StoreOption = None,
    host: Annotated[str, typer.Option(help="address to listen on (loopback by default: only this machine)")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port")] = 8000,
) -> None:
    """A read-only dashboard over the store: runs, run pages, compare, history with change points."""
    from colbench.cli.common import friendly

    friendly(_serve)(store, host, port)


def _serve(store: str | None, host: str, port: int) -> None:
    from colbench.cli.common import UsageError, _store, err_console

    try:
        import uvicorn

        from colbench.report.dashboard import create_app
    except ImportError as exc:
        from colbench.install import add_extra

        raise UsageError(f"colbench serve needs the serve extra: `{add_extra('serve')}` ({exc})") from None
    check_listen(host, port)
    db = _store(store, create=False)
    if not _is_loopback(host):
        err_console.print(f"[yellow]warning:[/yellow] listening on {host}: anyone who can reach this machine can "
                          "read the results", highlight=False)
    err_console.print(f"colbench dashboard over {db.url} at http://{host}:{port}/ (Ctrl-C stops)", highlight=False,
                      soft_wrap=True)
    uvicorn.run(create_app(db), host=host, port=port, log_level="warning", access_log=False)


def check_listen(host: str, port: int) -> None:
    """One clear line before uvicorn starts, rather than its log and exit code: a host that is neither an address
    nor a name this machine resolves, or an address:port this process cannot listen on."""
    from colbench.cli.common import UsageError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, ValueError):
        raise UsageError(f"--host {host!r}: not an IP address or a host name this machine resolves "
                         "(e.g. 127.0.0.1, or 0.0.0.0 for every interface)") from None
    family, kind, proto, _, address = infos[0]
    try:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port or --host")\
            from None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="colbench report and serve (registered on the main `colbench` command too).")
app.command("report")(report)
app.command("serve")(serve)

if __name__ == "__main__":
    app()
