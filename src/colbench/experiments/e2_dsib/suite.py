"""The suites of E2 — Data Science I/O baseline (2019)."""

from __future__ import annotations

from colbench.model.suite import Suite, SuiteEntry

E = SuiteEntry


E2 = Suite(
    name="e2",
    description="E2 Data Science I/O baseline: pandas with Parquet vs CSV (read, write, continuous read)",
    iterations=3, warmup=1, processes=6,
    entries=(E("dsib", {"rows": [300_000]}),),
)
