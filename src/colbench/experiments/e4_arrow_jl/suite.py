"""The suites of E4 — Arrow.jl vs CSV.jl (2020)."""

from __future__ import annotations

from colbench.model.suite import Suite, SuiteEntry

E = SuiteEntry


E4 = Suite(
    name="e4",
    description="E4 Arrow vs CSV for a 10 × Int64 frame: mmap, stream, owned copy, CSV; first run vs warm",
    iterations=3, warmup=1, processes=6,
    entries=(E("mmap-read", {"rows": [2_000_000]}),),
)
