"""What the experiments' plots share: orders, colours and row filters."""

from __future__ import annotations

from collections.abc import Sequence

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import thread_count
from colbench.render.figures import PALETTE

READER_ORDER = ("pyarrow", "pandas-pyarrow", "polars", "duckdb", "pandas", "data.table", "readr", "vroom")


SOURCE_ORDER = ("nyctaxi_2010-01", "fanniemae_2016Q4")


FORMAT_ORDER = ("parquet", "feather", "feather_v1", "ipc_stream")


CODEC_ORDER = ("uncompressed", "snappy", "lz4", "zstd", "gzip", "brotli")


ERROR_KW = {"elinewidth": 0.8, "capsize": 2, "ecolor": "#333333"}


READ_COLOR, CONVERT_COLOR, DIRECT_COLOR = PALETTE[0], PALETTE[1], PALETTE[2]


def ok_rows(summaries: Sequence[CaseSummary], benchmark: str) -> list[CaseSummary]:
    return [s for s in summaries if s.benchmark == benchmark and s.ok]


def most_threads(summaries: Sequence[CaseSummary]) -> list[CaseSummary]:
    """Only the cases at the largest thread count (the posts reported the most cores)."""
    if not summaries:
        return []
    most = max(thread_count(s) for s in summaries)
    return [s for s in summaries if thread_count(s) == most]
