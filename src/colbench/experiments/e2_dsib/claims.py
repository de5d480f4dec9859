"""The claims of E2 (Data Science I/O baseline, 2019): Parquet vs CSV with pandas, seconds as published."""

from __future__ import annotations

from colbench.experiments.e2_dsib.published import E2_SECONDS
from colbench.model.claims import Claim, ClaimCase, LeastGainClaim, Untestable


def _case(operation: str, variant: str, fmt: str) -> ClaimCase:
    return ClaimCase("dsib", {"operation": operation, "variant": variant, "format": fmt,
                              "allocator": "default", "cache": "warm"})


def _parquet_beats_csv(operation: str, variant: str, words: str) -> Claim:
    parquet, csv = E2_SECONDS[(operation, variant)]
    return Claim(f"e2-{operation.replace('_', '-')}-{variant}", "e2",
                 f"{words} ({variant}): Parquet beats CSV", _case(operation, variant, "parquet"),
                 _case(operation, variant, "csv"), published=csv / parquet,
                 source=f"{parquet:g} s vs {csv:g} s")


CLAIMS = (
    _parquet_beats_csv("read", "plain", "read from memory"),
    _parquet_beats_csv("read", "str", "read from memory"),
    _parquet_beats_csv("read", "cat", "read from memory"),
    _parquet_beats_csv("continuous_read", "plain", "continuous read of six months"),
    _parquet_beats_csv("write", "plain", "write"),
    _parquet_beats_csv("write", "str", "write"),
    _parquet_beats_csv("write", "cat", "write"),
)

COMPOUND = (
    LeastGainClaim("e2-str-gains-least", "e2", "reads: the str variant (high-entropy strings) gains least from "
                   "Parquet", "e2-read-str", ("e2-read-plain", "e2-read-cat"),
                   source="speed-ups 38× plain, 14× str, 30× cat"),
)

UNTESTABLE = (
    Untestable("e2", "Parquet reads and writes are 14–38× faster than CSV at 10.9 M rows",
               "a factor that depends on size and hardware; at the suite's rows the claim tested is the order "
               "(Parquet beats CSV) with the measured factor shown beside the published one (--scale for more)"),
)
