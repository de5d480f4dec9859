"""The suites of E1 — arrowbench CSV readers (R, 2021).

`e1` is what the post's claims compare, sized to decide them here: on the taxi file Arrow into a table and
into a data frame, data.table's fread and vroom (`altrep = FALSE`); on Fannie Mae Arrow and fread into a data
frame; plain CSV, at the machine's most threads (2 on the reference VM), 6 processes a case. An exact rank
interval at the level Holm asks of E1's five claims (1 - 0.05/5) needs at least 5 processes a side; with fewer
every timing claim reads "inconclusive: too few samples" however clear the difference, and with exactly 5 the
interval is the most extreme pair of processes, so one disturbed process decides it. 6 leaves that margin.
500,000 rows is 3.4 % of the taxi file's 14.86 M rows and 2.3 % of Fannie Mae's 22.18 M: a read is ~0.4 s of
CPU, well above process start-up and first-iteration effects; the suite took 1 min 43 s on the idle 2-core
reference VM, its data generated on the way. `--scale` moves toward the post's sizes on a bigger machine.
docs/experiments.md says what moves the taxi headline (threads, OpenMP waiting, the `*` flag, float text,
datetime parsing, size, load) and by how much.

`e1-all` is the full grid (every reader colbench has, gzip, 1 and 2 threads), 3 processes a case, for the
figure rather than the claims.
"""

from __future__ import annotations

from colbench.benchmarks.common import FANNIE, TAXI_2010
from colbench.model.suite import Suite, SuiteEntry

E = SuiteEntry

#: rows of each twin in E1's suites
E1_ROWS = 500_000

E1 = Suite(
    name="e1",
    description="E1 arrowbench CSV readers, sized for the claims: Arrow (table, data frame), fread and vroom on "
                "taxi, Arrow and fread on Fannie Mae; plain CSV, most threads",
    iterations=3, warmup=1, processes=6,
    entries=(
        E("csv-read", {"reader": ["pyarrow", "data.table", "vroom"], "source": [TAXI_2010], "compression": ["none"],
                       "rows": [E1_ROWS], "threads": [2]}),
        E("csv-read", {"reader": ["pyarrow", "data.table"], "source": [FANNIE], "output": ["dataframe"],
                       "compression": ["none"], "rows": [E1_ROWS], "threads": [2]}),
    ),
)

E1_ALL = Suite(
    name="e1-all",
    description="E1 in full: every Python and R reader × taxi/Fannie Mae × plain/gzip × 1 and 2 threads",
    iterations=3, warmup=1, processes=3,
    entries=(
        E("csv-read", {"rows": [E1_ROWS]}),
        # with defaults polars and DuckDB stop at the taxi file's one `*` flag; the same read, types from all rows
        E("csv-read", {"reader": ["polars", "duckdb"], "inference": ["full"], "rows": [E1_ROWS]}),
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
