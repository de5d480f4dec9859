"""Cells of result tables: a case's median with its spread, the published figure beside it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from colbench.analysis.aggregate import CaseSummary
from colbench.render.fmt import fmt_seconds, spread


def median_s(s: CaseSummary | None) -> float | None:
    return s.wall.get("median") if s is not None and s.ok else None


def cell(s: CaseSummary | None) -> str:
    if s is None:
        return "-"
    if not s.ok:
        return f"[red]{','.join(s.error_kinds)}[/red]"
    return f"{fmt_seconds(median_s(s))} {spread(s)}"


def row_for(summaries: Sequence[CaseSummary], **params: Any) -> CaseSummary | None:
    found = [s for s in summaries if all(s.params.get(k) == v for k, v in params.items())]
    if not found:
        return None
    return max(found, key=lambda s: s.params.get("threads", 0))  # the most threads, as the posts reported


def published_cell(value: float | None) -> str:
    return "" if value is None else fmt_seconds(value)


def input_size(summary: CaseSummary) -> int | None:
    for result in summary.results:
        data = (result.get("inputs") or {}).get("data") or {}
        if data.get("size_bytes"):
            return int(data["size_bytes"])
    return None
