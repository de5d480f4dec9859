"""fastparquet: the pure-Python-and-numba-free Parquet reader/writer for pandas (single-threaded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from colbench.engines.base import Applied, Engine, codec_or_none


class FastparquetEngine(Engine):
    name = "fastparquet"
    module = "fastparquet"
    read_formats = {"parquet": ("dataframe",)}
    write_formats = {"parquet": ("uncompressed", "snappy", "zstd", "lz4", "gzip", "brotli")}

    def configure(self, threads: int) -> Applied:
        return {"fastparquet": 1}  # it has no thread pool of its own

    def read(self, path: Path, fmt: str, output: str, memory_map: bool = False) -> Any:
        import fastparquet

        return fastparquet.ParquetFile(str(path)).to_pandas()

    def load_for_write(self, path: Path, fmt: str) -> Any:
        from colbench.engines.pyarrow_engine import read_arrow_table

        return read_arrow_table(path, fmt, False).to_pandas()

    def write(self, data: Any, path: Path, fmt: str, codec: str) -> None:
        import fastparquet

        # "lz4" means LZ4_RAW, as pyarrow writes it; fastparquet's "LZ4" is the deprecated Hadoop framing
        name = {"lz4": "LZ4_RAW"}.get(codec, (codec_or_none(codec) or "UNCOMPRESSED").upper())
        fastparquet.write(str(path), data, compression=name)
