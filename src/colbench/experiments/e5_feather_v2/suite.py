"""The suites of E5 — Feather V2 vs Parquet (2020)."""

from __future__ import annotations

from colbench.benchmarks.common import FANNIE
from colbench.model.suite import Suite, SuiteEntry

E = SuiteEntry

#: processes of the reads E5's claims compare: the least that decides a family of E5's size (docs/claims.md);
#: the writes and conversions of the figure keep the suite's 3
CLAIM_PROCESSES = 6


E5 = Suite(
    name="e5",
    description="E5 Feather V2 vs Parquet: read/write × codec × Arrow table / data frame × threads, file sizes",
    iterations=3, warmup=1, processes=3,
    entries=(
        # the post measured Arrow's own readers and writers; `file-read`/`file-write` alone cover every engine
        E("file-read", {"engine": ["pyarrow"], "format": ["parquet"], "codec": ["uncompressed", "snappy"],
                        "rows": [500_000]}, processes=CLAIM_PROCESSES),
        E("file-read", {"engine": ["pyarrow"], "format": ["feather"], "codec": ["uncompressed", "lz4", "zstd"],
                        "rows": [500_000]}, processes=CLAIM_PROCESSES),
        E("file-write", {"engine": ["pyarrow"], "format": ["parquet"], "codec": ["uncompressed", "snappy"],
                         "rows": [500_000]}),
        E("file-write", {"engine": ["pyarrow"], "format": ["feather"], "codec": ["uncompressed", "lz4", "zstd"],
                         "rows": [500_000]}),
        E("dataframe-conversion", {"rows": [500_000]}),
        # the post's cold-cache claim: compressed Feather beats uncompressed where the disk is the bottleneck
        E("file-read", {"engine": ["pyarrow"], "format": ["feather"], "codec": ["uncompressed", "lz4"],
                        "source": [FANNIE], "output": ["arrow_table"], "cache": ["cold"], "rows": [500_000]},
          processes=CLAIM_PROCESSES),
    ),
)
