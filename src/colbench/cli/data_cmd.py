"""``colbench data``: list, get, make, prepare and clean the data sets and the format cache.

Thin: every command parses its arguments, calls the data use cases (:mod:`colbench.app.data_sets`,
:mod:`colbench.app.data_cache`) and prints. Errors from the data layer are one line on stderr and exit code 2, like
the rest of the CLI.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from colbench.cli.common import NetDeadlineOption, UsageError, console, friendly
from colbench.model.benchmark import DataRequest
from colbench.paths import data_dir
from colbench.redact import redact
from colbench.render.fmt import fmt_bytes
from colbench.words import plural

if TYPE_CHECKING:
    from colbench.app.data_sets import DataSets

data_app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                       help="Data sets: real sources, synthetic twins and the format cache.")
RootOption = Annotated[Path | None, typer.Option("--root", help="data directory (default $COLBENCH_DATA, else "
                                                 f"$COLBENCH_HOME/data; here: {data_dir()})")]


def _root(root: Path | None) -> Path:
    from colbench.app.data_sets import data_root

    return data_root(root)


# --- list -----------------------------------------------------------------------------------------------

@data_app.command("list")
@friendly
def list_cmd(
    cached: Annotated[bool, typer.Option("--cached", help="list the materialised files and their sizes")] = False,
    dataset: Annotated[str | None, typer.Option("--dataset", help="only this data set (with --cached)")] = None,
    root: RootOption = None,
) -> None:
    """Every data set: whether it is here, its size and where it comes from."""
    from colbench.app.data_sets import data_sets

    base = _root(root)
    if cached:
        _print_cached(base, dataset)
        return
    console.print(_data_sets_table(data_sets(base)))


def _print_cached(base: Path, dataset: str | None) -> None:
    from colbench.app.data_cache import cached

    files = cached(base, dataset)
    table = Table(title=f"cached files in {base / 'cache'}")
    for col in ("dataset", "rows", "format", "codec", "options", "size"):
        table.add_column(col, justify="right" if col in ("rows", "size") else "left")
    for f in sorted(files, key=lambda f: (f.dataset, f.rows, f.format, f.codec or "")):
        opts = " ".join(f"{k}={v}" for k, v in sorted(f.options.items()))
        scale = f"{f.rows:,}" + ("" if f.synthetic else " (real)")
        table.add_row(f.dataset, scale, f.format, f.codec or "-", opts, fmt_bytes(f.size_bytes))
    console.print(table)
    console.print(f"{plural(len(files), 'file')}, {fmt_bytes(sum(f.size_bytes for f in files))}")


def _data_sets_table(found: DataSets) -> Table:
    table = Table(title="data sets")
    for col in ("name", "kind", "local", "size", "rows × cols", "from"):
        table.add_column(col, overflow="fold")
    for st in found.sources:
        src = st.source
        local = ("[green]downloaded[/green], " + st.detail) if st.present else (st.detail or "not downloaded")
        size = " / ".join(x for x in (fmt_bytes(src.compressed_size) + " gz" if src.compressed_size else "",
                                     "≈" + fmt_bytes(src.size) if src.size else "") if x) or "?"
        dims = f"{src.rows:,} × {src.columns}" if src.rows else (f"? × {src.columns}" if src.columns else "?")
        kind = "user source" if src.user else ("source + twin" if src.twin else "source")
        table.add_row(src.name, kind, local, size, dims, redact(src.origin))
    for name, gen in found.synthetic.items():
        dims = f"{gen.full_rows:,} (default)" if gen.full_rows else "rows=N"
        table.add_row(name, "synthetic", "generated on demand", "-", dims, gen.description)
    return table


# --- get ------------------------------------------------------------------------------------------------

@data_app.command("get")
@friendly
def get_cmd(
    name: Annotated[str, typer.Argument(help="source name (see `colbench data list`)")],
    decompress: Annotated[bool, typer.Option(help="also decompress it into the cache as CSV")] = True,
    retries: Annotated[int, typer.Option(help="retries after a dropped connection")] = 3,
    progress: Annotated[bool, typer.Option(help="show a progress bar")] = True,
    root: RootOption = None,
    deadline: NetDeadlineOption = None,
) -> None:
    """Download a source (resuming a partial download), verify its checksum and decompress it. Each try has a
    deadline (--net-deadline, plus the time its size takes at 256 KiB/s); what arrived is kept for the next."""
    from colbench.app.data_sets import fetch

    def say_fetched(state: Any) -> None:
        console.print(f"{name}: {state.archive} ({fmt_bytes(state.size)}, {state.detail})", highlight=False)

    fetched = fetch(name, _root(root), progress=progress and sys.stderr.isatty(), retries=retries,
                    deadline_s=deadline, decompress=decompress, on_fetched=say_fetched)
    if fetched.csv is not None:
        made = fetched.csv
        console.print(f"{name}: {made.path} ({fmt_bytes(made.size_bytes)}, {made.rows:,} rows × {made.columns})",
                      highlight=False)


# --- make -----------------------------------------------------------------------------------------------

def _parse_options(pairs: Sequence[str]) -> dict[str, int | float | str]:
    out: dict[str, int | float | str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"option {pair!r}: write key=value")
        out[key.strip()] = _auto(value.strip())
    return out


def _auto(value: str) -> int | float | str:
    """A number when the text is one; else the text, with a delimiter's name (tab, pipe, comma) as its character."""
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return _delimiter(value)


def _delimiter(value: str) -> str:
    """A delimiter's character from its name (tab, pipe, comma); any other text as it is."""
    return {"tab": "\t", "pipe": "|", "comma": ","}.get(value, value)


@data_app.command("make")
@friendly
def make_cmd(
    name: Annotated[str, typer.Argument(help="data set name")],
    rows: Annotated[int, typer.Option("--rows", help="rows of the synthetic twin")],
    seed: Annotated[int, typer.Option("--seed", help="random seed")] = 0,
    fmt: Annotated[str, typer.Option("--format", help="csv, parquet, feather_v1, feather, ipc_file, "
                                     "ipc_stream")] = "csv",
    codec: Annotated[str | None, typer.Option("--codec", help="codec (default: the format's)")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="key=value (variant=str, "
                                                     "row_group_size=…, type=int64 …)")] = None,
    verify: Annotated[bool, typer.Option(help="re-hash the file if it is already cached")] = False,
    root: RootOption = None,
) -> None:
    """Generate a synthetic data set (deterministic: same name, rows and seed give the same bytes)."""
    from colbench.app.data_cache import make

    request = DataRequest(name, fmt, codec, rows, seed, _parse_options(option or []))
    made = make(request, _root(root), verify=verify)
    rate = made.file.size_bytes / 1e6 / max(made.seconds, 1e-9)
    how = ("already cached, verified" if verify else "already cached") if made.cached else \
        f"made in {made.seconds:.2f} s, {rate:.3g} MB/s"
    console.print(f"{made.file.path}\n{made.file.rows:,} rows × {made.file.columns} columns, "
                  f"{fmt_bytes(made.file.size_bytes)} ({how})", highlight=False)


# --- prepare --------------------------------------------------------------------------------------------

def prepare_requests(requests: Sequence[DataRequest], root: Path | None = None, *, dry_run: bool = False,
                     force: bool = False, out: Console | None = None) -> int:
    """Show what the requests need and how much disk it takes, then materialise them; returns new bytes."""
    from colbench.app.data_cache import free_bytes, plan_prepare, prepare

    out = out or console
    base = _root(root)
    pp = plan_prepare(requests, base)
    table = Table(title=f"data for {plural(len(pp.requests), 'input')}")
    for col in ("file", "size", "state"):
        table.add_column(col, justify="right" if col == "size" else "left", overflow="fold")
    for f in pp.files:
        size = fmt_bytes(f.size_bytes) if f.exact or f.present else "≈" + fmt_bytes(f.size_bytes)
        table.add_row(f.label, size, "present" if f.present else "to make")
    out.print(table)
    out.print(f"new: ≈{fmt_bytes(pp.new_bytes)}, already there: {fmt_bytes(pp.present_bytes)}, "
              f"free on {base}: {fmt_bytes(free_bytes(base))}", highlight=False)
    if dry_run:
        return pp.new_bytes
    start = time.perf_counter()
    prepare(pp.requests, base, force=force,
            on_file=lambda i, n, r: out.print(f"[{i + 1}/{n}] {r.dataset} {r.format} {r.codec or ''}",
                                              highlight=False))
    out.print(f"done in {time.perf_counter() - start:.1f} s", highlight=False)
    return pp.new_bytes


@data_app.command("prepare")
@friendly
def prepare_cmd(
    suite: Annotated[str, typer.Argument(help="suite or benchmark name")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="only show what would be made")] = False,
    force: Annotated[bool, typer.Option("--force", help="go on even if the disk looks too small")] = False,
    root: RootOption = None,
) -> None:
    """Materialise every file a suite will need, after showing how much disk it takes."""
    from colbench.app.data_cache import data_for

    prepare_requests(data_for([suite]), root, dry_run=dry_run, force=force)


# --- clean ----------------------------------------------------------------------------------------------

@data_app.command("clean")
@friendly
def clean_cmd(
    dataset: Annotated[str | None, typer.Argument(help="only this data set")] = None,
    downloads: Annotated[bool, typer.Option("--downloads", help="also delete downloaded sources")] = False,
    stale: Annotated[bool, typer.Option("--stale", help="only files of old generator versions, unfinished "
                                        "temporary files and files without manifest")] = False,
    root: RootOption = None,
) -> None:
    """Free the disk used by the format cache (and downloads with --downloads). DATASET must be a known data set;
    nothing outside $COLBENCH_HOME and $COLBENCH_DATA is ever deleted."""
    from colbench.app.data_cache import clean

    freed = clean(_root(root), dataset=dataset, downloads=downloads, stale=stale)
    console.print(f"freed {fmt_bytes(freed)}", highlight=False)


# --- user sources ---------------------------------------------------------------------------------------

@data_app.command("register")
@friendly
def register_cmd(
    name: Annotated[str, typer.Argument(help="name for the new source")],
    location: Annotated[str, typer.Argument(help="URL or local file")],
    checksum: Annotated[str | None, typer.Option(help="md5:<hex> or sha256:<hex> (computed for local files "
                                                 "when left out)")] = None,
    delimiter: Annotated[str, typer.Option(help="field delimiter (tab, pipe or the character)")] = ",",
    header: Annotated[bool, typer.Option(help="first line holds the column names")] = True,
    replace: Annotated[bool, typer.Option("--replace", help="overwrite a user source of that name")] = False,
) -> None:
    """Register your own source (kept in $COLBENCH_HOME/sources.json)."""
    from colbench.app.data_sets import register

    registered = register(name, location, checksum, delimiter=_delimiter(delimiter), header=header, replace=replace)
    src = registered.source
    console.print(f"registered {src.name} ({redact(src.origin)}, {src.checksum or 'no checksum'}) in "
                  f"{registered.registry}", highlight=False)


@data_app.command("unregister")
@friendly
def unregister_cmd(name: Annotated[str, typer.Argument(help="user source to forget")]) -> None:
    """Remove a user source from the registry (its downloaded files stay until `data clean --downloads`)."""
    from colbench.app.data_sets import unregister

    unregister(name)
    console.print(f"unregistered {name}")
