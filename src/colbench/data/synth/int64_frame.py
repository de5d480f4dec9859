"""E4's frame: ten Int64 columns ``x1 … x10`` with ``x_i = i, i+1, …`` (Julia: ``i:10^7+i``).

The values are fully determined by the row count (the seed is ignored); the CSV is what CSV.jl writes:
a header, commas, LF line ends.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from colbench.data.synth.base import Generator, GenOptions, OptionSpec, TextLayout, option_int


class Int64Frame(Generator):
    name = "int64_frame"
    version = "1"
    kind = "frame"
    description = "E4: 10 Int64 columns x_i = i:rows+i-1 (Arrow.jl vs CSV.jl)"
    full_rows = 10_000_001
    chunk_rows = 1_048_576
    option_specs = (OptionSpec("columns", 10, kind=int, help="number of columns"),)

    def names(self, options: GenOptions) -> tuple[str, ...]:
        return tuple(f"x{i}" for i in range(1, option_int(options, "columns") + 1))

    def layout(self, options: GenOptions) -> TextLayout:
        return TextLayout(delimiter=",", header=True, line_terminator="\n", column_names=self.names(options))

    def csv_bytes(self, rows: int, options: GenOptions) -> int | None:
        # digits grow with the row count, so a small sample would underestimate: count them instead
        names = self.names(options)
        total = len(",".join(names)) + 1 + rows * len(names)  # header; a comma or newline after each value
        for i in range(1, len(names) + 1):
            total += _digits_in_range(i, i + rows - 1)
        return total

    def tables(self, rows: int, seed: int, options: GenOptions) -> Iterator[pa.Table]:
        names = self.names(options)
        for _k, start, n in self.chunk_sizes(rows):
            base = np.arange(start, start + n, dtype=np.int64)
            yield pa.table({name: pa.array(base + i) for i, name in enumerate(names, start=1)})


def _digits_in_range(lo: int, hi: int) -> int:
    """Total decimal digits of the integers lo … hi (lo ≥ 1)."""
    total, width, start = 0, 1, 1
    while start <= hi:
        end = start * 10 - 1
        a, b = max(lo, start), min(hi, end)
        if a <= b:
            total += (b - a + 1) * width
        start, width = start * 10, width + 1
    return total
