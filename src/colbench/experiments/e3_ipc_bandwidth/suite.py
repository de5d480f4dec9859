"""The suites of E3 — Arrow Java in-memory read bandwidth (2018)."""

from __future__ import annotations

from colbench.model.suite import Suite, SuiteEntry

E = SuiteEntry


E3 = Suite(
    name="e3",
    description="E3 Arrow in-memory read bandwidth: batch size × access × threads, pyarrow and Arrow Java",
    iterations=5, warmup=2, processes=3,
    entries=(
        # the post read through a channel that copies every read ("stream"); "buffer" is the zero-copy path
        # the claims' cases first, with 6 processes: the least that decides E3's family (docs/claims.md); the
        # entry below repeats them, and a case already planned is not planned twice
        E("ipc-bandwidth", {"type": ["binary"], "rows": [200_000], "batch_rows": [1_000, 10_000, 100_000],
                            "source": ["stream"], "access": ["offsets", "materialize"],
                            "runtime": ["python", "java"]}, processes=6),
        E("ipc-bandwidth", {"type": ["binary"], "rows": [200_000], "batch_rows": [10_000], "source": ["buffer"],
                            "access": ["scan"], "runtime": ["python", "java"]}, processes=6),
        E("ipc-bandwidth", {"type": ["binary"], "rows": [200_000], "batch_rows": [1_000, 10_000, 100_000],
                            "source": ["stream", "buffer"], "runtime": ["python", "java"]}),
        E("ipc-bandwidth", {"type": ["int32", "int64"], "rows": [5_000_000], "batch_rows": [10_000, 1_000_000],
                            "source": ["stream"], "access": ["lazy", "scan", "materialize"],
                            "runtime": ["python", "java"]}),
    ),
)
