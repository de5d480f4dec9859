"""Suites that belong to no single experiment: `quick`, a smoke run of every benchmark, and `gate`, the cases a
pull request is gated on (docs/gating.md)."""

from __future__ import annotations

from colbench.benchmarks.common import FANNIE, TAXI_2010
from colbench.model.suite import Suite, SuiteEntry

E = SuiteEntry

QUICK = Suite(
    name="quick",
    description="one or two small cases of every benchmark: a few minutes on 2 cores",
    iterations=3, warmup=1, processes=2,
    entries=(
        E("placebo", {"duration": [0.005]}),
        E("csv-read", {"reader": ["pyarrow", "data.table"], "source": [TAXI_2010], "compression": ["none"],
                       "output": ["dataframe"], "rows": [100_000], "threads": [2]}),
        E("file-read", {"format": ["parquet"], "codec": ["snappy"], "engine": ["pyarrow"], "source": [FANNIE],
                        "output": ["dataframe"], "rows": [100_000], "threads": [2]}),
        E("file-read", {"format": ["feather"], "codec": ["lz4"], "engine": ["pyarrow"], "source": [FANNIE],
                        "output": ["arrow_table"], "rows": [100_000], "threads": [2]}),
        E("file-write", {"format": ["feather"], "codec": ["zstd"], "engine": ["pyarrow"], "source": [FANNIE],
                         "input": ["arrow_table"], "rows": [100_000], "threads": [2]}),
        E("dataframe-conversion", {"direction": ["to_pandas"], "source": [TAXI_2010], "rows": [100_000],
                                   "threads": [2]}),
        E("dsib", {"variant": ["plain"], "format": ["parquet", "csv"], "operation": ["read"], "rows": [50_000]}),
        E("ipc-bandwidth", {"type": ["binary"], "rows": [50_000], "batch_rows": [10_000], "access": ["scan"],
                            "threads": [1], "runtime": ["python", "java"]}),
        E("mmap-read", {"operation": ["read_mmap", "read_copy"], "rows": [500_000]}),
    ),
)

GATE = Suite(
    name="gate",
    description="CI gate: one real case per engine and format family, each >= 100 ms here; run with --until-decided",
    iterations=5, warmup=1, processes=12,
    entries=(
        E("csv-read", {"reader": ["pyarrow"], "source": [FANNIE], "compression": ["none"], "output": ["arrow_table"],
                       "rows": [500_000], "threads": [1]}),
        E("csv-read", {"reader": ["polars", "data.table"], "source": [FANNIE], "compression": ["none"],
                       "output": ["dataframe"], "rows": [500_000], "threads": [1]}),
        E("csv-read", {"reader": ["duckdb"], "source": [FANNIE], "compression": ["none"], "output": ["dataframe"],
                       "rows": [300_000], "threads": [1]}),
        E("file-read", {"format": ["parquet"], "codec": ["snappy"], "engine": ["pyarrow"], "source": [FANNIE],
                        "output": ["arrow_table"], "rows": [1_000_000], "threads": [1]}),
        E("file-read", {"format": ["feather"], "codec": ["lz4"], "engine": ["pyarrow"], "source": [FANNIE],
                        "output": ["arrow_table"], "rows": [3_000_000], "threads": [1]}),
        E("file-write", {"format": ["parquet"], "codec": ["snappy"], "engine": ["pyarrow"], "source": [FANNIE],
                         "input": ["arrow_table"], "rows": [1_000_000], "threads": [1]}),
        E("dataframe-conversion", {"direction": ["to_pandas"], "source": [FANNIE], "rows": [4_000_000],
                                   "threads": [1]}),
        E("dsib", {"variant": ["plain"], "format": ["parquet"], "operation": ["read"], "rows": [1_000_000],
                   "threads": [1]}),
    ),
)
