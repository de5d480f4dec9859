"""The suites of E5 — Feather V2 vs Parquet (2020)."""

from __future__ import annotations

from colbench.model.benchmark import Suite, SuiteEntry

E = SuiteEntry


E5 = Suite(
    name="e5",
    description="E5 Feather V2 vs Parquet: read/write × codec × Arrow table / data frame × threads, file sizes",
    iterations=3, warmup=1, processes=3,
    entries=(
        # the post measured Arrow's own readers and writers; `file-read`/`file-write` alone cover every engine
        E("file-read", {"engine": ["pyarrow"], "format": ["parquet"], "codec": ["uncompressed", "snappy"],
                        "rows": [500_000]}),
        E("file-read", {"engine": ["pyarrow"], "format": ["feather"], "codec": ["uncompressed", "lz4", "zstd"],
                        "rows": [500_000]}),
        E("file-write", {"engine": ["pyarrow"], "format": ["parquet"], "codec": ["uncompressed", "snappy"],
                         "rows": [500_000]}),
        E("file-write", {"engine": ["pyarrow"], "format": ["feather"], "codec": ["uncompressed", "lz4", "zstd"],
                         "rows": [500_000]}),
        E("dataframe-conversion", {"rows": [500_000]}),
    ),
)
