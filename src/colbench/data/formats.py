"""The file formats of the cache and how each is written from typed Arrow batches.

| format       | file                                   | codecs                                           |
| ------------ | -------------------------------------- | ------------------------------------------------ |
| ``csv``      | the source's own text layout           | None (uncompressed), ``gzip``                    |
| ``parquet``  | ``pyarrow.parquet``                    | uncompressed, snappy (default), zstd, lz4, gzip, brotli |
| ``feather_v1`` | ``write_feather(version=1)``         | uncompressed                                     |
| ``feather``  | Feather V2 = Arrow IPC file, as ``write_feather`` | uncompressed, lz4 (default), zstd     |
| ``ipc_file`` | Arrow IPC file format                  | uncompressed (default), lz4, zstd                |
| ``ipc_stream`` | Arrow IPC stream format              | uncompressed (default), lz4, zstd                |

Format options (``DataRequest.options``): ``row_group_size`` (Parquet rows per row group; 0 = one row
group for the whole file, the 2019 default), ``chunk_size`` (rows per IPC record batch; Feather's default
65 536), ``compression_level``.

Everything except Feather V1 is written batch by batch (bounded memory); Feather V1 has no streaming
writer, so that file is assembled in memory.
"""

from __future__ import annotations

import gzip
import shutil
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from colbench.data.errors import DataError


@dataclass(frozen=True)
class FormatSpec:
    name: str
    extension: str
    codecs: tuple[str | None, ...]
    default_codec: str | None
    text: bool = False


FORMATS: dict[str, FormatSpec] = {
    "csv": FormatSpec("csv", "csv", (None, "gzip"), None, text=True),
    "parquet": FormatSpec("parquet", "parquet", ("uncompressed", "snappy", "zstd", "lz4", "gzip", "brotli"),
                          "snappy"),
    "feather_v1": FormatSpec("feather_v1", "feather", ("uncompressed",), "uncompressed"),
    "feather": FormatSpec("feather", "feather", ("uncompressed", "lz4", "zstd"), "lz4"),
    "ipc_file": FormatSpec("ipc_file", "arrow", ("uncompressed", "lz4", "zstd"), "uncompressed"),
    "ipc_stream": FormatSpec("ipc_stream", "arrows", ("uncompressed", "lz4", "zstd"), "uncompressed"),
}
FORMAT_OPTIONS = ("row_group_size", "chunk_size", "compression_level")
#: the format options that apply to a file's format (integers only): part of its name and its lineage
FormatOptions = dict[str, int]
FEATHER_CHUNK = 64 * 1024  # pyarrow.feather.write_feather's default chunksize
GZIP_LEVEL = 6  # what the gzip tool uses


def normalize(fmt: str, codec: str | None) -> tuple[str, str | None]:
    """Validated (format, codec) with the default codec filled in; CSV uncompressed is ``None``."""
    spec = FORMATS.get(fmt)
    if spec is None:
        raise DataError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    c = codec.lower() if isinstance(codec, str) else codec
    if c in ("none", "uncompressed", "") and spec.text:
        c = None
    elif c in ("none", ""):
        c = "uncompressed"
    elif c is None:
        c = spec.default_codec
    elif c == "gz":
        c = "gzip"
    if c not in spec.codecs:
        shown = ", ".join("uncompressed" if x is None else x for x in spec.codecs)
        raise DataError(f"{fmt} has no codec {codec!r}; codecs: {shown}")
    return fmt, c


def file_name(fmt: str, codec: str | None, options: FormatOptions) -> str:
    parts = [fmt] + ([codec] if codec else []) + [f"{k}={options[k]}" for k in sorted(options)]
    ext = FORMATS[fmt].extension + (".gz" if fmt == "csv" and codec == "gzip" else "")
    return "-".join(str(p) for p in parts) + "." + ext


def format_options(fmt: str, options: Mapping[str, str | int | float | bool | None]) -> FormatOptions:
    """The format options that apply to ``fmt`` (ints), validated."""
    out: FormatOptions = {}
    for key in FORMAT_OPTIONS:
        given = options.get(key)
        if given is None:
            continue
        try:
            value = int(given)
        except (TypeError, ValueError):
            raise DataError(f"option {key} must be an integer, got {given!r}") from None
        if key == "row_group_size" and fmt != "parquet":
            continue  # meaningless elsewhere; keep the cache key independent of it
        if key == "chunk_size" and fmt not in ("feather", "ipc_file", "ipc_stream"):
            continue
        if key == "compression_level" and fmt == "feather_v1":
            continue
        if value < 0 or (value == 0 and key == "chunk_size"):
            raise DataError(f"option {key} must be positive, got {value}")
        out[key] = value
    return out


def rechunk(batches: Iterable[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """Batches of exactly ``rows`` rows (the last one shorter), whatever came in."""
    buf: list[pa.RecordBatch] = []
    have = 0
    for batch in batches:
        buf.append(batch)
        have += batch.num_rows
        while have >= rows:
            table = pa.Table.from_batches(buf)
            head = table.slice(0, rows).combine_chunks()
            yield from head.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
            rest = table.slice(rows)
            buf = rest.to_batches()
            have = rest.num_rows
    if have:
        yield from pa.Table.from_batches(buf).combine_chunks().to_batches()


@dataclass
class Written:
    rows: int
    columns: int
    schema: pa.Schema


def write_batches(fmt: str, codec: str | None, options: FormatOptions, schema: pa.Schema,
                  batches: Iterable[pa.RecordBatch] | pa.Table, dest: Path) -> Written:
    """Write typed data as ``fmt``/``codec`` to ``dest`` (a temporary path; the caller renames).

    A whole ``pa.Table`` (small files) goes to Feather through ``write_feather`` itself; batches are
    streamed through the IPC file writer, which makes the same file up to buffer padding.
    """
    level = options.get("compression_level")
    if isinstance(batches, pa.Table) and fmt in ("feather", "feather_v1"):
        table = batches.combine_chunks() if fmt == "feather_v1" else batches
        if fmt == "feather_v1":
            _write_feather_v1(table, dest)
        else:
            feather.write_feather(table, dest, compression=codec, compression_level=level,
                                  chunksize=options.get("chunk_size") or FEATHER_CHUNK, version=2)
        return Written(rows=table.num_rows, columns=table.num_columns, schema=table.schema)
    counted = _Counted(batches.to_batches() if isinstance(batches, pa.Table) else batches)
    if fmt == "parquet":
        _write_parquet(counted, schema, codec, level, options.get("row_group_size"), dest)
    elif fmt == "feather_v1":
        table = pa.Table.from_batches(list(counted), schema=schema).combine_chunks()
        _write_feather_v1(table, dest)
    elif fmt in ("feather", "ipc_file", "ipc_stream"):
        _write_ipc(counted, fmt, schema, codec, level, options.get("chunk_size") or FEATHER_CHUNK, dest)
    else:
        raise DataError(f"{fmt} is not a binary format")
    return Written(rows=counted.rows, columns=len(schema), schema=schema)


class _Counted:
    """Batches passed through once, their rows counted on the way."""

    def __init__(self, batches: Iterable[pa.RecordBatch]) -> None:
        self.batches = batches
        self.rows = 0

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for b in self.batches:
            self.rows += b.num_rows
            yield b


def _write_parquet(batches: Iterable[pa.RecordBatch], schema: pa.Schema, codec: str | None, level: int | None,
                   group: int | None, dest: Path) -> None:
    with pq.ParquetWriter(dest, schema, compression="none" if codec == "uncompressed" else codec,
                          compression_level=level) as writer:
        if group == 0:  # one row group: the whole table at once
            table = pa.Table.from_batches(list(batches), schema=schema)
            writer.write_table(table, row_group_size=max(table.num_rows, 1))
        else:
            size = group or 1024 * 1024  # pyarrow's default maximum row group length
            for b in rechunk(batches, size):
                writer.write_batch(b, row_group_size=size)


def _write_ipc(batches: Iterable[pa.RecordBatch], fmt: str, schema: pa.Schema, codec: str | None, level: int | None,
               chunk: int, dest: Path) -> None:
    """Feather V2, an Arrow IPC file or stream, `chunk` rows a batch."""
    compression = None if codec == "uncompressed" else (pa.Codec(codec, level) if level else codec)
    opts = ipc.IpcWriteOptions(compression=compression)
    make = ipc.new_stream if fmt == "ipc_stream" else ipc.new_file
    with pa.OSFile(str(dest), "wb") as sink, make(sink, schema, options=opts) as writer:
        for b in rechunk(batches, chunk):
            writer.write_batch(b)


def _write_feather_v1(table: pa.Table, dest: Path) -> None:
    # pyarrow 25 deprecated writing V1; the Feather V2 post (E5) compares against it, so we still do
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*Feather V1.*")
        feather.write_feather(table, dest, version=1)


def gzip_file(src: Path, dest: Path, level: int | None = None) -> None:
    """gzip without a file name or time stamp in the header, so the bytes depend on the content only."""
    with open(src, "rb") as fin, open(dest, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=level or GZIP_LEVEL, mtime=0) as out:
        shutil.copyfileobj(fin, out, 4 * 2**20)
