"""The claims of E4 (Arrow.jl vs CSV.jl, 2020): a 10 × Int64 frame, warm runs unless named."""

from __future__ import annotations

from colbench.experiments.e4_arrow_jl.published import E4_FIRST_RUN_SECONDS, E4_SECONDS
from colbench.model.claims import Claim, ClaimCase, Untestable


def _op(operation: str, metric: str = "time") -> ClaimCase:
    return ClaimCase("mmap-read", {"operation": operation, "allocator": "default", "cache": "warm"}, metric=metric)


CLAIMS = (
    Claim("e4-mmap-vs-stream", "e4", "a memory-mapped \"read\" ≪ a read from a stream (≥ 10×)",
          _op("read_mmap"), _op("read_stream"), at_least=10.0,
          published=E4_SECONDS["read_stream"] / E4_SECONDS["read_mmap"], source="0.0003 s vs 0.32 s"),
    Claim("e4-stream-vs-copy", "e4", "reading from a stream beats copying into owned columns",
          _op("read_stream"), _op("read_copy"), published=E4_SECONDS["read_copy"] / E4_SECONDS["read_stream"],
          source="0.32 s vs 0.52 s"),
    Claim("e4-copy-vs-csv", "e4", "even an owned copy of Arrow data is much faster (≥ 2×) than reading the CSV",
          _op("read_copy"), _op("read_csv"), at_least=2.0,
          published=E4_SECONDS["read_csv"] / E4_SECONDS["read_copy"], source="0.52 s vs 3.3 s"),
    Claim("e4-write-arrow-vs-csv", "e4", "writing Arrow is much faster (≥ 2×) than writing CSV",
          _op("write_arrow"), _op("write_csv"), at_least=2.0,
          published=E4_SECONDS["write_csv"] / E4_SECONDS["write_arrow"], source="2.2 s vs 15 s"),
    Claim("e4-csv-first-run", "e4", "the first CSV read in a fresh process is slower than a warm one",
          _op("read_csv"), _op("read_csv", "first_run"),
          published=E4_FIRST_RUN_SECONDS["read_csv"] / E4_SECONDS["read_csv"], source="7.4 s first vs 3.3 s warm"),
    Claim("e4-sizes-comparable", "e4", "the CSV file and the Arrow file are of comparable size (within 2×)",
          _op("write_arrow", "file_size"), _op("write_csv", "file_size"), at_least=0.5, at_most=2.0,
          published=788.9 / 800.0, source="788.9 MB of CSV for 800 MB of Int64 values"),
)

UNTESTABLE = (
    Untestable("e4", "first runs pay Julia's compilation", "colbench's workers are Python (no JIT); its first "
               "iteration pays imports and first-call set-up instead, which the first-run claim measures"),
)
