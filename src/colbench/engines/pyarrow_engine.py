"""Arrow C++ through pyarrow: the reference reader and writer for every format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from colbench.engines.base import Applied, CsvLayout, Engine, codec_or_none, release

PARQUET_CODECS = ("uncompressed", "snappy", "zstd", "lz4", "gzip", "brotli")
FEATHER_CODECS = ("uncompressed", "lz4", "zstd")


class PyArrowEngine(Engine):
    name = "pyarrow"
    module = "pyarrow"
    csv_outputs = ("arrow_table", "dataframe")
    read_formats = {f: ("arrow_table", "dataframe") for f in ("parquet", "feather", "feather_v1", "ipc_stream")}
    write_formats = {"parquet": PARQUET_CODECS, "feather": FEATHER_CODECS, "feather_v1": ("uncompressed",),
                     "ipc_stream": FEATHER_CODECS}

    def configure(self, threads: int) -> Applied:

        return set_arrow_threads(threads)

    def read_unsupported(self, fmt: str, codec: str) -> str | None:
        return feather_unsupported(fmt, codec)

    def read_csv(self, path: Path, layout: CsvLayout, output: str) -> Any:
        import pyarrow.csv as pacsv

        # Only the delimiter (and, for headerless files, generated names) is given: types are inferred.
        table = pacsv.read_csv(path, read_options=pacsv.ReadOptions(autogenerate_column_names=not layout.header),
                               parse_options=pacsv.ParseOptions(delimiter=layout.delimiter))
        return table if output == "arrow_table" else table.to_pandas()

    def read(self, path: Path, fmt: str, output: str, memory_map: bool = False) -> Any:
        table = read_arrow_table(path, fmt, memory_map)
        return table if output == "arrow_table" else table.to_pandas()

    def load_for_write(self, path: Path, fmt: str) -> Any:
        return read_arrow_table(path, fmt, False)

    def write(self, data: Any, path: Path, fmt: str, codec: str) -> None:
        write_arrow(data, path, fmt, codec)


def feather_unsupported(fmt: str, codec: str) -> str | None:
    """pyarrow before 1.0 compressed Feather V2 (IPC) buffers in a layout of its own, which 1.0 replaced: it cannot
    read a compressed file that pyarrow 1.0 or later wrote, as the data cache does."""
    import pyarrow as pa

    if fmt in ("feather", "ipc_stream") and codec not in ("uncompressed", "none") and release(pa.__version__) < (1, 0):
        return (f"pyarrow {pa.__version__} cannot read {codec}-compressed Arrow IPC of the 1.0 format (its own "
                "compression predates it); the cache's file is written by a newer pyarrow")
    return None


def set_arrow_threads(threads: int) -> Applied:
    """Arrow's CPU pool (and, from pyarrow 1.0 on, its I/O pool) sized to `threads`; what they now are."""
    import pyarrow as pa

    pa.set_cpu_count(threads)
    applied: Applied = {"arrow_cpu": pa.cpu_count()}
    if hasattr(pa, "set_io_thread_count"):  # pyarrow 0.17 has none
        pa.set_io_thread_count(threads)
        applied["arrow_io"] = pa.io_thread_count()
    return applied


def read_arrow_table(path: Path, fmt: str, memory_map: bool) -> Any:
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    if fmt == "parquet":
        return pq.read_table(path, memory_map=memory_map)
    if fmt in ("feather", "feather_v1"):
        return feather.read_table(path, memory_map=memory_map)
    if fmt == "ipc_stream":
        source = pa.memory_map(str(path)) if memory_map else pa.OSFile(str(path))
        with pa.ipc.open_stream(source) as reader:
            return reader.read_all()
    raise ValueError(f"pyarrow cannot read {fmt}")


def write_arrow(data: Any, path: Path, fmt: str, codec: str) -> None:
    """Write a pyarrow Table or a pandas DataFrame (converted inside the timed part, as users pay for it)."""
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    if fmt == "parquet":
        table = data if isinstance(data, pa.Table) else pa.Table.from_pandas(data, preserve_index=False)
        pq.write_table(table, path, compression=codec_or_none(codec) or "none")
    elif fmt == "feather":
        feather.write_feather(data, path, compression=codec, version=2)
    elif fmt == "feather_v1":
        feather.write_feather(data, path, version=1)
    elif fmt == "ipc_stream":
        table = data if isinstance(data, pa.Table) else pa.Table.from_pandas(data, preserve_index=False)
        options = pa.ipc.IpcWriteOptions(compression=codec_or_none(codec))
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema, options=options) as writer:
            writer.write_table(table)
    else:
        raise ValueError(f"pyarrow cannot write {fmt}")
