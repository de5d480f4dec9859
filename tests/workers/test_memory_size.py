"""The decoded size the Python worker records for a read's output (`output.memory_bytes`), per kind of output."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from colbench.workers.python.worker import memory_size


def test_memory_size_of_each_kind_of_output():
    table = pa.table({"a": list(range(1000)), "s": [f"value {i}" for i in range(1000)]})
    assert memory_size(table) == table.nbytes > 8000
    frame = table.to_pandas()
    assert memory_size(frame) == int(frame.memory_usage(index=True, deep=True).sum())
    assert memory_size(frame) > 8000 + 1000 * len("value 0")  # the strings count (pandas 3 holds them as str dtype)
    import polars as pl

    assert memory_size(pl.from_arrow(table)) == pl.from_arrow(table).estimated_size()
    column = table.column("a").to_numpy()
    assert memory_size({"a": column, "b": column}) == 2 * column.nbytes
    assert memory_size([table, table]) == 2 * table.nbytes
    assert memory_size(Path("/tmp/written.parquet")) is None  # a writer's output: no decoded size
    assert memory_size([table, Path("x")]) is None  # not a partial figure either
