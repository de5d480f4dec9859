"""The built-in suites: `quick` (a smoke run of every benchmark) and the five reference experiments."""

from __future__ import annotations

from colbench.model.benchmark import Suite, SuiteEntry
from colbench.suites.common import FANNIE, TAXI_2010

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

E2 = Suite(
    name="e2",
    description="E2 Data Science I/O baseline: pandas with Parquet vs CSV (read, write, continuous read)",
    iterations=3, warmup=1, processes=3,
    entries=(E("dsib", {"rows": [300_000]}),),
)

E3 = Suite(
    name="e3",
    description="E3 Arrow in-memory read bandwidth: batch size × access × threads, pyarrow and Arrow Java",
    iterations=5, warmup=2, processes=3,
    entries=(
        # the post read through a channel that copies every read ("stream"); "buffer" is the zero-copy path
        E("ipc-bandwidth", {"type": ["binary"], "rows": [200_000], "batch_rows": [1_000, 10_000, 100_000],
                            "source": ["stream", "buffer"], "runtime": ["python", "java"]}),
        E("ipc-bandwidth", {"type": ["int32", "int64"], "rows": [5_000_000], "batch_rows": [10_000, 1_000_000],
                            "source": ["stream"], "access": ["lazy", "scan", "materialize"],
                            "runtime": ["python", "java"]}),
    ),
)

E4 = Suite(
    name="e4",
    description="E4 Arrow vs CSV for a 10 × Int64 frame: mmap, stream, owned copy, CSV; first run vs warm",
    iterations=3, warmup=1, processes=3,
    entries=(E("mmap-read", {"rows": [2_000_000]}),),
)

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

SUITES = (QUICK, E1, E2, E3, E4, E5, ALLOCATOR, GATE)
