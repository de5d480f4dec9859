"""What an engine adapter knows: which formats it reads and writes, into and out of which native form.

Native forms: `arrow_table` (a pyarrow.Table) and `dataframe` (the library's own data frame: pandas for
pyarrow/pandas/duckdb/fastparquet, polars.DataFrame for polars).
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Dict, Union

OUTPUTS = ("arrow_table", "dataframe")
FILE_FORMATS = ("parquet", "feather", "feather_v1", "ipc_stream")


@dataclass(frozen=True)
class CsvLayout:
    """How a CSV file is laid out; readers are given only this, and infer types as the experiments did."""

    delimiter: str = ","
    header: bool = True
    #: infer types from every row instead of the reader's default sample (polars reads 100 rows, DuckDB a
    #: sample): the taxi file's single `*` flag breaks both with their defaults, as it does on the real file
    full_inference: bool = False


#: what a library reports it now uses after `configure` (its thread pools, its CSV parser), by setting
Applied = Dict[str, Union[int, str]]  # typing's: the worker runs on Python 3.8 too


class Engine:
    name: ClassVar[str]
    module: ClassVar[str]
    csv_outputs: ClassVar[tuple[str, ...]] = ()
    read_formats: ClassVar[dict[str, tuple[str, ...]]] = {}  # format → outputs
    write_formats: ClassVar[dict[str, tuple[str, ...]]] = {}  # format → codecs
    #: the module of this engine's data frame (the `dataframe` output)
    frame_module: ClassVar[str] = "pandas"

    def unavailable(self) -> str | None:
        """Why this engine cannot run here (not installed), or None."""
        if importlib.util.find_spec(self.module) is None:
            from colbench.install import add_package

            return f"{self.module} is not installed ({add_package(self.module)})"
        return None

    def version(self) -> str:
        return str(importlib.import_module(self.module).__version__)

    def configure(self, threads: int) -> Applied:
        """Apply the thread count; return what the library reports it now uses."""
        return {}

    def prepare(self, output: str) -> None:
        """Untimed, before the first iteration: import what producing `output` needs.

        pyarrow's `to_pandas` and DuckDB's `df()` import pandas on first use, which put a one-off import
        (≈ 1 s here, up to 15× a 500k-row read) into the first timed iteration, whereas the R worker loads its
        reader's package before timing. Importing it here keeps a library load out of every sample.
        """
        if output == "dataframe":
            importlib.import_module(self.frame_module)

    # --- capabilities, for validity filters ---
    def can_read(self, fmt: str, output: str) -> str | None:
        if fmt not in self.read_formats:
            return f"{self.name} does not read {fmt}"
        if output not in self.read_formats[fmt]:
            return f"{self.name} does not read {fmt} into {output}"
        return None

    def can_write(self, fmt: str, codec: str) -> str | None:
        if fmt not in self.write_formats:
            return f"{self.name} does not write {fmt}"
        if codec not in self.write_formats[fmt]:
            return f"{self.name} does not write {fmt} with {codec}"
        return None

    # --- what an old release of the library lacks (checked in the worker, untimed) ---
    def csv_unsupported(self) -> str | None:
        """Why the installed release cannot read CSV as this engine does, or None."""
        return None

    def read_unsupported(self, fmt: str, codec: str) -> str | None:
        """Why the installed release cannot read this format and codec as the cache wrote it, or None."""
        return None

    # --- work ---
    def read_csv(self, path: Path, layout: CsvLayout, output: str) -> Any:
        raise NotImplementedError

    def read(self, path: Path, fmt: str, output: str, memory_map: bool = False) -> Any:
        raise NotImplementedError

    def load_for_write(self, path: Path, fmt: str) -> Any:
        """Untimed: the data to write, in this engine's data frame form, read from a cached file."""
        raise NotImplementedError

    def write(self, data: Any, path: Path, fmt: str, codec: str) -> None:
        raise NotImplementedError


def shape(obj: Any) -> tuple[int, int]:
    """(rows, columns) of any native output."""
    if hasattr(obj, "num_rows") and hasattr(obj, "num_columns"):
        return int(obj.num_rows), int(obj.num_columns)
    if hasattr(obj, "shape"):
        rows, cols = obj.shape
        return int(rows), int(cols)
    raise TypeError(f"cannot tell the shape of {type(obj).__name__}")


def release(version: str) -> tuple[int, int]:
    """(major, minor) of a library's version string ("0.17.1" → (0, 17)); the worker has no `packaging`."""
    parts = (version.split(".") + ["0"])[:2]
    return int("".join(c for c in parts[0] if c.isdigit()) or 0), int("".join(c for c in parts[1] if c.isdigit()) or 0)


def codec_or_none(codec: str) -> str | None:
    return None if codec in ("uncompressed", "none") else codec
