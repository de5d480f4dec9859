"""Pieces the built-in benchmarks share: params with the experiments' defaults, engine checks, shape checks."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colbench.engines import CsvLayout, get_engine, shape
from colbench.model.benchmark import CheckFailed, Context, OutputCheck, default_threads
from colbench.model.params import Param, positive

TAXI_2010 = "nyctaxi_2010-01"
FANNIE = "fanniemae_2016Q4"
TAXI_2016 = "nyctaxi_2016-01"
R_READERS = ("data.table", "readr", "vroom")


def rows_param(default: int, help_text: str = "rows of the synthetic twin (scaled by --scale)") -> Param:
    return Param("rows", default=(default,), type=int, check=positive, help=help_text)


def threads_param(*defaults: int) -> Param:
    values = tuple(dict.fromkeys(min(t, default_threads()) for t in defaults)) or (default_threads(),)
    return Param("threads", default=values, type=int, check=positive,
                 help="threads for every engine in the worker; the worker is pinned to this many CPUs")


def remove_output(path: Path, scratch: Path) -> None:
    """Delete a file this worker wrote into its own scratch directory (a write case's output, before the next
    iteration). The one deletion not made by `colbench.paths.remove`: that module is 3.11-only and larger, and the
    worker runs on every Python from 3.8 with as few imports as it can. The file must sit directly in `scratch`; a
    symlink is unlinked, never followed."""
    if path.parent.resolve() != scratch.resolve():
        raise ValueError(f"refusing to delete {path}: it is not in the worker's scratch directory {scratch}")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def engine_missing(name: str) -> str | None:
    if name in R_READERS:
        from colbench.runtimes import get_runtime

        return get_runtime("r").unavailable()
    return get_engine(name).unavailable()


@dataclass(frozen=True)
class InputFacts:
    """What the data cache told the worker about one input file (its case.json ``inputs`` entry) that a
    benchmark reads: how to parse a CSV, and the shape the output must have."""

    delimiter: str = ","
    header: bool = True
    rows: int | None = None
    columns: int | None = None

    @classmethod
    def of(cls, ctx: Context, name: str = "data") -> InputFacts:
        info = ctx.input_info.get(name) or {}
        return cls(delimiter=info.get("delimiter") or ",", header=info.get("header", True) is not False,
                   rows=info.get("rows"), columns=info.get("columns"))


def csv_layout(ctx: Context, name: str = "data") -> CsvLayout:
    info = InputFacts.of(ctx, name)
    return CsvLayout(delimiter=info.delimiter, header=info.header)


def check_shape(ctx: Context, output: Any, name: str = "data", checksum: str | None = None) -> OutputCheck:
    """Compare the output's rows × columns with what the data cache says the input holds."""
    rows, cols = shape(output)
    info = InputFacts.of(ctx, name)
    want_rows, want_cols = info.rows, info.columns
    if want_cols is not None and cols != want_cols:
        raise CheckFailed(f"output has {cols} columns, the input has {want_cols}")
    if want_rows is not None and rows != want_rows:
        if rows == want_rows + 1 and _first_row_all_null(output):
            # polars keeps the taxi file's blank line after the header as an all-null row
            ctx.warn("the reader kept the blank line after the header as an all-null row")
        else:
            raise CheckFailed(f"output has {rows} rows, the input has {want_rows}")
    return OutputCheck(rows=rows, columns=cols, checksum=checksum)


def _first_row_all_null(output: Any) -> bool:
    try:
        if hasattr(output, "null_count") and hasattr(output, "head") and hasattr(output, "row"):  # polars
            return all(v is None for v in output.row(0))
        first = output.iloc[0] if hasattr(output, "iloc") else None
        if first is not None:
            return bool(first.isna().all())
        return all(col[0].as_py() is None for col in output.columns)
    except Exception:
        return False
