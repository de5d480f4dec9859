"""The suites of E1 — arrowbench CSV readers (R, 2021)."""

from __future__ import annotations

from colbench.model.benchmark import Suite, SuiteEntry

E = SuiteEntry


E1 = Suite(
    name="e1",
    description="E1 arrowbench CSV readers: Python and R readers × taxi/Fannie Mae × plain/gzip × threads",
    iterations=3, warmup=1, processes=3,
    entries=(
        E("csv-read", {"rows": [500_000]}),
        # with defaults polars and DuckDB stop at the taxi file's one `*` flag; the same read, types from all rows
        E("csv-read", {"reader": ["polars", "duckdb"], "inference": ["full"], "rows": [500_000]}),
    ),
)


ALLOCATOR = Suite(
    name="allocator",
    description="E1's allocator study: Arrow CSV and Parquet reads with jemalloc, mimalloc and the system allocator",
    iterations=3, warmup=1, processes=3,
    entries=(
        E("csv-read", {"reader": ["pyarrow"], "compression": ["none"], "rows": [500_000],
                       "allocator": ["jemalloc", "mimalloc", "system"]}),
        E("file-read", {"engine": ["pyarrow"], "format": ["parquet"], "codec": ["snappy"], "rows": [500_000],
                        "allocator": ["jemalloc", "mimalloc", "system"]}),
    ),
)
