"""The DSIB variants of the 2016 taxi months (E2): ``str`` and ``cat`` columns, ``store_and_fwd_flag`` as bool.

The post read each month with pandas, turned ``store_and_fwd_flag`` into a bool, added ``str`` = the
sha256 hex of the row (64 characters, high entropy) — or, for ``cat``, ``"a-b-c"`` from its first three
hex digits (at most 4096 values) — and wrote Parquet; its CSV files with strings were written back by
``DataFrame.to_csv``. So the variant CSVs have pandas' layout: LF line ends, floats as ``repr``
(``0.0``, ``-73.99037170410156``), ``True``/``False``. The ``plain`` CSV stays the TLC file.

The row hashed is the pandas-style text of the row without the new column (the post hashed
``str(row)``, a pandas repr that depends on the pandas version); what matters — 64 hex characters per row,
no repeats; 4096 categories — is kept. This works on the real months and on the twins alike.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Iterator
from typing import BinaryIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from colbench.data import textfmt
from colbench.data.synth.base import TextLayout

VARIANTS = ("plain", "str", "cat")
VERSION = "1"  # bump when the variant text changes
FLAG = "store_and_fwd_flag"


def flag_as_bool(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``store_and_fwd_flag`` Y/N → bool, as the post stored it; other columns untouched."""
    if FLAG not in batch.schema.names:
        return batch
    i = batch.schema.get_field_index(FLAG)
    col = batch.column(i)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return batch
    flag = pc.equal(col, "Y")
    return batch.set_column(i, pa.field(FLAG, pa.bool_()), flag)


def bool_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for b in batches:
        yield flag_as_bool(b)


def bool_schema(schema: pa.Schema) -> pa.Schema:
    if FLAG not in schema.names or not pa.types.is_string(schema.field(FLAG).type):
        return schema
    return schema.set(schema.get_field_index(FLAG), pa.field(FLAG, pa.bool_()))


def layout(base: TextLayout) -> TextLayout:
    return TextLayout(delimiter=",", header=True, line_terminator="\n",
                      column_names=(*base.column_names, "str"))


def _pandas_text(batch: pa.RecordBatch) -> pa.Table:
    """The columns as ``DataFrame.to_csv`` prints them (ints and timestamps print alike in Arrow)."""
    batch = flag_as_bool(batch)
    cols = []
    for field, col in zip(batch.schema, batch.columns, strict=True):
        if pa.types.is_boolean(field.type):
            col = textfmt.text_array(("False", "True")).take(pc.cast(col, pa.int8()))
        elif pa.types.is_floating(field.type):
            col = textfmt.pandas_float(col)
        cols.append(col)
    return pa.table(cols, names=batch.schema.names)


def write_variant(batches: Iterable[pa.RecordBatch], variant: str, out: BinaryIO) -> int:
    """Write the variant CSV (header included) of typed plain batches; returns the data rows written."""
    wopts = pacsv.WriteOptions(include_header=False, quoting_style="none", eol="\n")
    rows = 0
    header_done = False
    for batch in batches:
        text = _pandas_text(batch)
        if not header_done:
            out.write((",".join([*text.column_names, "str"]) + "\n").encode())
            header_done = True
        buf = io.BytesIO()
        pacsv.write_csv(text, buf, wopts)
        lines = buf.getvalue().split(b"\n")[:-1]
        digests = pa.array([hashlib.sha256(line).hexdigest() for line in lines], type=pa.string())
        if variant == "cat":
            parts = [pc.utf8_slice_codeunits(digests, i, i + 1) for i in range(3)]
            digests = pc.binary_join_element_wise(*parts, "-")
        pacsv.write_csv(text.append_column("str", digests), out, wopts)
        rows += batch.num_rows
    return rows
