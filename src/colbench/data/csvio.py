"""Reading a cached CSV back as typed Arrow data, the way the experiments did.

The experiments gave their readers only the delimiter (and the header handling) and let them infer the
types; the binary formats of the cache are made the same way so that every format holds the same data.
``pyarrow.csv.read_csv`` infers over the whole file, widening a column when a later block needs it (the
single ``*`` in the 2010 taxi flags makes the column a string). That needs the whole table in memory, so
files above ``COLBENCH_CONVERT_IN_MEMORY_BYTES`` (1 GiB by default) are read in two streaming passes:
the first infers each block's types and widens them like pyarrow does, the second converts with those
types fixed, batch by batch.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from colbench.data.errors import DataError
from colbench.data.synth.base import TextLayout

STREAM_BLOCK = 64 * 2**20


def in_memory_limit() -> int:
    return int(os.environ.get("COLBENCH_CONVERT_IN_MEMORY_BYTES", 2**30))


@dataclass
class TypedCsv:
    """A CSV file read as typed record batches (schema known before the first batch)."""

    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]
    streamed: bool


def read_table(path: Path, layout: TextLayout) -> pa.Table:
    try:
        return pacsv.read_csv(path, read_options=layout.read_options(), parse_options=layout.parse_options())
    except pa.ArrowInvalid as exc:
        raise DataError(f"{path} cannot be read as CSV with delimiter {layout.delimiter!r}: {exc}") from None


def _rank(t: pa.DataType) -> int:
    """Position in pyarrow's inference order (null, int64, bool, date, time, timestamps, double, string)."""
    if pa.types.is_null(t):
        return 0
    if pa.types.is_integer(t):
        return 1
    if pa.types.is_boolean(t):
        return 2
    if pa.types.is_date(t):
        return 3
    if pa.types.is_time(t):
        return 4
    if pa.types.is_timestamp(t):
        return 5 + ("s", "ms", "us", "ns").index(t.unit)
    if pa.types.is_floating(t):
        return 9
    return 10


def unify(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """The type pyarrow gives a column whose blocks were inferred as ``a`` and ``b``."""
    if a == b:
        return a
    lo, hi = sorted((a, b), key=_rank)
    if pa.types.is_null(lo):
        return hi
    compatible = ((pa.types.is_integer(lo) and (pa.types.is_floating(hi) or pa.types.is_boolean(hi)))
                  or (pa.types.is_date(lo) and pa.types.is_timestamp(hi))
                  or (pa.types.is_timestamp(lo) and pa.types.is_timestamp(hi)))
    if compatible:
        return hi
    return pa.binary() if pa.types.is_binary(hi) or pa.types.is_binary(lo) else pa.string()


def _pieces(path: Path, block: int) -> Iterator[bytes]:
    """The file in blocks cut after a newline (the twins and the sources have no quoted newlines)."""
    with open(path, "rb") as f:
        rest = b""
        while True:
            data = f.read(block)
            if not data:
                if rest:
                    yield rest
                return
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest = data
                continue
            yield data[:cut]
            rest = data[cut:]


def infer_schema(path: Path, layout: TextLayout, block: int | None = None) -> pa.Schema:
    """pyarrow's whole-file inference, one block at a time."""
    block = block or STREAM_BLOCK
    names: list[str] | None = None
    types: list[pa.DataType] = []
    for piece in _pieces(path, block):
        # the first piece carries the header (if any); later ones get the names
        opts = layout.read_options() if names is None else pacsv.ReadOptions(column_names=names)
        if not piece.strip():
            continue
        table = pacsv.read_csv(io.BytesIO(piece), read_options=opts, parse_options=layout.parse_options())
        if names is None:
            names = table.column_names
            types = [f.type for f in table.schema]
        else:
            types = [unify(a, f.type) for a, f in zip(types, table.schema, strict=True)]
    if names is None:
        raise DataError(f"{path} is empty")
    return pa.schema(list(zip(names, types, strict=True)))


def open_typed(path: Path, layout: TextLayout, *, batch_rows: int = 65_536) -> TypedCsv:
    """Typed batches of a CSV file: in memory when small, else streamed in two passes."""
    from colbench.data.formats import rechunk

    if path.stat().st_size <= in_memory_limit():
        table = read_table(path, layout)
        # the reader makes one chunk per 1 MB block (≈ 6 000 taxi rows): regroup them, per-batch costs add up
        return TypedCsv(table.schema, rechunk(table.to_batches(), batch_rows), streamed=False)
    schema = infer_schema(path, layout)
    return TypedCsv(schema, _stream(path, layout, schema), streamed=True)


def _stream(path: Path, layout: TextLayout, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    widened = dict(zip(schema.names, schema.types, strict=True))
    convert = pacsv.ConvertOptions(column_types=widened)
    try:
        reader = pacsv.open_csv(path, read_options=layout.read_options(block_size=16 * 2**20),
                                parse_options=layout.parse_options(), convert_options=convert)
        yield from reader
    except pa.ArrowInvalid as exc:
        # A widening rule did not match pyarrow's (e.g. int vs bool with values other than 0/1): say which.
        m = re.search(r"column #(\d+)", str(exc))
        col = schema.names[int(m.group(1))] if m else "?"
        raise DataError(f"{path}: column {col} does not convert as inferred ({exc}); "
                        "raise COLBENCH_CONVERT_IN_MEMORY_BYTES to read the file in memory") from None
