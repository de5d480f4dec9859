"""polars: its own Rust readers and writers; its data frame is the native output."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

from colbench.engines.base import Applied, CsvLayout, Engine


class PolarsEngine(Engine):
    name = "polars"
    module = "polars"
    frame_module = "polars"
    csv_outputs = ("dataframe",)
    read_formats = {"parquet": ("dataframe",), "feather": ("dataframe",), "ipc_stream": ("dataframe",)}
    write_formats = {"parquet": ("uncompressed", "snappy", "zstd", "lz4", "gzip", "brotli"),
                     "feather": ("uncompressed", "lz4", "zstd")}

    def configure(self, threads: int) -> Applied:
        # polars sizes its pool once, at import, from POLARS_MAX_THREADS (set by the orchestrator)
        os.environ.setdefault("POLARS_MAX_THREADS", str(threads))
        import polars as pl

        return {"polars": pl.thread_pool_size()}

    def read_csv(self, path: Path, layout: CsvLayout, output: str) -> Any:
        import polars as pl

        length = None if layout.full_inference else 100  # 100 is polars' default
        return pl.read_csv(path, separator=layout.delimiter, has_header=layout.header, infer_schema_length=length)

    def read(self, path: Path, fmt: str, output: str, memory_map: bool = False) -> Any:
        import polars as pl

        if fmt == "parquet":
            return pl.read_parquet(path, memory_map=memory_map)
        if fmt == "ipc_stream":
            return pl.read_ipc_stream(path)
        # polars 2 dropped read_ipc's memory_map switch (it maps files itself); older versions still take it
        if "memory_map" in inspect.signature(pl.read_ipc).parameters:
            # polars 1.x's read_ipc takes memory_map; the stubs are polars 2's (the lock), which dropped it
            return pl.read_ipc(path, memory_map=memory_map)  # type: ignore[call-arg]
        return pl.read_ipc(path)

    def load_for_write(self, path: Path, fmt: str) -> Any:
        import polars as pl

        from colbench.engines.pyarrow_engine import read_arrow_table

        return pl.from_arrow(read_arrow_table(path, fmt, False))

    def write(self, data: Any, path: Path, fmt: str, codec: str) -> None:
        if fmt == "parquet":
            data.write_parquet(path, compression=codec)
        else:
            data.write_ipc(path, compression=codec)
