"""E3's data: one (or a few) columns of binary / int32 / int64 values for the in-memory IPC bandwidth test.

Binary values are random bytes of exactly ``value_size`` bytes, as the Java generator produced; the
bandwidth of E3 counts those payload bytes only. Chunks hold at most ~32 MiB so that 1 KiB values at
tens of millions of rows stay memory-bounded. Binary columns have no CSV form.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import pyarrow as pa

from colbench.data.errors import DataError
from colbench.data.synth.base import (
    Generator,
    GenOptions,
    OptionSpec,
    OptionValue,
    TextLayout,
    option_float,
    option_int,
    option_str,
)

TYPES = {"binary": pa.binary(), "int32": pa.int32(), "int64": pa.int64()}
CHUNK_BYTES = 32 * 2**20


class IpcColumn(Generator):
    name = "ipc_column"
    version = "1"
    kind = "frame"
    description = "E3: a binary/int/long column of a given value size (Arrow Java in-memory read bandwidth)"
    option_specs = (
        OptionSpec("type", "binary", choices=tuple(TYPES), help="value type"),
        OptionSpec("value_size", 1024, kind=int, help="bytes per binary value"),
        OptionSpec("columns", 1, kind=int, help="number of columns"),
        OptionSpec("null_fraction", 0.0, kind=float, help="share of null values"),
    )

    def options(self, given: Mapping[str, OptionValue] | None) -> GenOptions:
        opts = super().options(given)
        kind = option_str(opts, "type")
        if kind != "binary":
            opts["value_size"] = TYPES[kind].bit_width // 8  # fixed by the type
        if option_int(opts, "value_size") < 1 or option_int(opts, "columns") < 1 \
                or not 0 <= option_float(opts, "null_fraction") < 1:
            raise DataError("ipc_column needs value_size >= 1, columns >= 1 and 0 <= null_fraction < 1")
        return opts

    def names(self, options: GenOptions) -> tuple[str, ...]:
        return tuple(f"c{i}" for i in range(option_int(options, "columns")))

    def supports_csv(self, options: GenOptions) -> bool:
        return options["type"] != "binary"

    def layout(self, options: GenOptions) -> TextLayout:
        return TextLayout(delimiter=",", header=True, line_terminator="\n", column_names=self.names(options))

    def schema(self, options: GenOptions) -> pa.Schema:
        return pa.schema([(name, TYPES[option_str(options, "type")]) for name in self.names(options)])

    def tables(self, rows: int, seed: int, options: GenOptions) -> Iterator[pa.Table]:
        per_row = option_int(options, "value_size") * option_int(options, "columns")
        step = max(1, CHUNK_BYTES // per_row)
        for k, start in enumerate(range(0, rows, step)):
            n = min(step, rows - start)
            rng = self.rng(seed, k)
            yield pa.table({name: self._column(rng, n, options) for name in self.names(options)})

    def _column(self, rng: np.random.Generator, n: int, options: GenOptions) -> pa.Array:
        kind, size = option_str(options, "type"), option_int(options, "value_size")
        null_fraction = option_float(options, "null_fraction")
        nulls = rng.random(n) < null_fraction if null_fraction else None
        if kind == "binary":
            data = rng.integers(0, 256, n * size, dtype=np.uint8)
            offsets = np.arange(0, (n + 1) * size, size, dtype=np.int64)
            if offsets[-1] < 2**31:
                arr = pa.BinaryArray.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                                   pa.py_buffer(data)])
            else:
                arr = pa.LargeBinaryArray.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets),
                                                                              pa.py_buffer(data)])
            if nulls is not None:
                arr = pa.compute.if_else(pa.array(nulls), pa.scalar(None, arr.type), arr)
            return arr
        dtype = np.int32 if kind == "int32" else np.int64
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        return pa.array(values, mask=nulls)
