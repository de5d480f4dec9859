"""vroom-style benchmark frames: all-numeric and all-character tables (``vroom::gen_tbl``).

``vroom_numeric``: standard-normal doubles (``gen_double`` defaults to ``rnorm``) printed as the
shortest round-trip decimal; ``vroom_character``: strings of 5–25 characters drawn from ``[a-zA-Z0-9]``
(``gen_character``'s defaults). Columns ``X1 … Xn`` (25 by default), a header, LF line ends.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from colbench.data.synth.base import Generator, GenOptions, OptionSpec, TextLayout, option_int, option_str

ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", dtype=np.uint8)


class _VroomFrame(Generator):
    kind = "frame"
    version = "1"
    full_rows = 1_000_000
    chunk_rows = 65_536
    option_specs = (OptionSpec("columns", 25, kind=int, help="number of columns"),
                    OptionSpec("delimiter", ",", choices=(",", "\t"), help="field delimiter"))

    def names(self, options: GenOptions) -> tuple[str, ...]:
        return tuple(f"X{i}" for i in range(1, option_int(options, "columns") + 1))

    def layout(self, options: GenOptions) -> TextLayout:
        return TextLayout(delimiter=option_str(options, "delimiter"), header=True, line_terminator="\n",
                          column_names=self.names(options))

    def tables(self, rows: int, seed: int, options: GenOptions) -> Iterator[pa.Table]:
        names = self.names(options)
        for k, _start, n in self.chunk_sizes(rows):
            rng = self.rng(seed, k)
            yield pa.table({name: self._column(rng, n) for name in names})

    def _column(self, rng: np.random.Generator, n: int) -> pa.Array:
        raise NotImplementedError


class VroomNumeric(_VroomFrame):
    name = "vroom_numeric"
    description = "vroom benchmark: all-numeric frame (standard-normal doubles)"

    def _column(self, rng: np.random.Generator, n: int) -> pa.Array:
        return pa.array(rng.standard_normal(n))


class VroomCharacter(_VroomFrame):
    name = "vroom_character"
    description = "vroom benchmark: all-character frame (5-25 alphanumeric characters)"

    def _column(self, rng: np.random.Generator, n: int) -> pa.Array:
        lengths = rng.integers(5, 26, n)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        data = ALPHABET[rng.integers(0, len(ALPHABET), int(offsets[-1]))]
        return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
